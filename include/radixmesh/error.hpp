// radixmesh/error.hpp — the one exception type of the library.
#pragma once
#include <stdexcept>
#include <string>

#include "radixmesh/export.hpp"

namespace radixmesh {

// What went wrong, coarsely; the CLI maps these to exit codes (docs/cli.md).
enum class ErrorCode {
  invalid_argument = 1,  // a caller's argument is wrong (k > n, m = 0, lengths differ, ...)
  io = 2,                // a file could not be read or written, or its contents are malformed
  out_of_memory = 3,     // not enough host or device memory; the message says needed vs available
  unsupported = 4,       // a type, option or device the build or machine does not support
  device = 5,            // a CUDA/NCCL/driver call failed
  internal = 6,          // a bug in radixmesh: please report it
};

// Every message names the problem and the fix: "what: why. fix: how".
class RXM_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] RXM_API void throw_error(ErrorCode code, const std::string& problem, const std::string& fix);

// Throws invalid_argument with the problem and fix when `condition` is false.
inline void require(bool condition, const std::string& problem, const std::string& fix) {
  if (!condition) throw_error(ErrorCode::invalid_argument, problem, fix);
}

}  // namespace radixmesh
