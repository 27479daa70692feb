// driver_main.hpp — the outermost frame of every benchmark driver's main(): --help, argument
// parsing and any failure end in one stderr line and an exit code, never in std::terminate
// (there may be no GPU, no driver, or a bad argument).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace radixmesh::bench {

// Exit codes of the benchmark drivers.
enum DriverExit : int {
  driver_ok = 0,
  driver_wrong_result = 1,  // ours disagreed with the reference
  driver_bad_argument = 2,  // rxm::Error(invalid_argument), e.g. from driver_argument_error
  driver_failed = 3,        // anything else: no GPU or driver, a device or I/O error, out of memory
};

// With "--help" or "-h" among the arguments, prints `usage` on stdout and returns driver_ok
// without running `body`; otherwise returns body(argc, argv), or, when it throws, prints
// "<name>: error: <message>" (one printable line) on stderr and returns the exit code above.
int driver_main(const char* name, const char* usage, int argc, char** argv, int (*body)(int, char**));

// Throws rxm::Error(invalid_argument) "<problem>. fix: see <name> --help".
[[noreturn]] void driver_argument_error(const std::string& name, const std::string& problem);

// A device list as the drivers take it ("0,0,0,0", "0,1"), or driver_argument_error naming --devices.
std::vector<int> driver_device_list(const std::string& name, const std::string& text);

// Walks a driver's flags:
//   DriverArgs args("bench_x", argc, argv);
//   while (args.next()) { if (args.is("--n")) n = args.value(); else args.unknown(); }
class DriverArgs {
 public:
  DriverArgs(std::string name, int argc, char** argv) : name_(std::move(name)), argc_(argc), argv_(argv) {}
  bool next() { return ++at_ < argc_; }                      // moves to the next flag
  bool is(const char* flag) const { return flag_() == flag; }
  std::string value();                                      // the flag's value; an error names the flag without one
  [[noreturn]] void unknown() const;                        // "unknown argument ..."
  const std::string& name() const { return name_; }

 private:
  std::string flag_() const { return argv_[at_]; }
  std::string name_;
  int argc_;
  char** argv_;
  int at_ = 0;
};

// The whole of `text` as a number (strtod: 1e8 and 0x10 too), or driver_argument_error naming `flag`.
double driver_number(const std::string& name, const std::string& flag, const char* text);
// A count: "2^k", or a whole number as driver_number reads it (1e8); driver_argument_error otherwise.
std::uint64_t driver_count(const std::string& name, const std::string& flag, const std::string& text);

}  // namespace radixmesh::bench
