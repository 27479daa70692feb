#include "radixmesh/error.hpp"

namespace radixmesh {

void throw_error(ErrorCode code, const std::string& problem, const std::string& fix) {
  throw Error(code, fix.empty() ? problem : problem + ". fix: " + fix);
}

}  // namespace radixmesh
