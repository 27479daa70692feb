// How a mesh algorithm turns an error in one device's local step into an error on every process:
// the step's exception is kept and handed to Communicator::fail() for that device, later local
// steps are skipped, and the next collective (which every process still calls) throws on every
// process. The process whose step failed rethrows its own error instead of the collective's.
#pragma once
#include <exception>
#include <string>

#include "radixmesh/communicator.hpp"

namespace radixmesh::mesh {

class LocalErrors {
 public:
  explicit LocalErrors(comm::Communicator& comm) : comm_(comm) {}

  bool any() const { return first_ != nullptr; }

  // Runs step() on behalf of mesh device `participant`, unless an earlier step failed.
  template <class Step> void run(int participant, Step&& step) {
    if (any()) return;
    try {
      step();
    } catch (const std::exception& e) {
      first_ = std::current_exception();
      comm_.fail(participant, e.what());
    }
  }

  // Runs a collective; a local error recorded before it wins over the collective's own error.
  template <class Collective> void collective(Collective&& call) {
    try {
      call();
    } catch (...) {
      if (first_) std::rethrow_exception(first_);
      throw;
    }
    if (first_) std::rethrow_exception(first_);  // a transport that did not report the failure
  }

 private:
  comm::Communicator& comm_;
  std::exception_ptr first_;
};

}  // namespace radixmesh::mesh
