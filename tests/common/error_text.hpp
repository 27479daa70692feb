// The message of the rxm::Error a call throws, or "" when it throws none.
#pragma once
#include <string>

#include "radixmesh/error.hpp"

namespace radixmesh::testing {

template <class Call> std::string error_text(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace radixmesh::testing
