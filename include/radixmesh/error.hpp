// radixmesh/error.hpp — the one exception type of the library.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

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

// `bytes` as one line of printable text, for messages that quote a file's content, a path or an
// argument: printable ASCII and printable UTF-8 characters pass unchanged (backslash included, so
// escaping twice changes nothing); newline, carriage return and tab become \n \r \t, other
// control bytes and bytes that are not valid UTF-8 become \xNN, and C1 controls, line separators
// and bidirectional overrides become \u{NNNN}.
RXM_API std::string printable_text(std::string_view bytes);

// Every message names the problem and the fix: "what: why. fix: how". The message is stored as
// printable_text, so printing it cannot drive a terminal whatever file content it quotes.
class RXM_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(printable_text(message)), code_(code) {}
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
