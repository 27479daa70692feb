#include "harness/driver_main.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string_view>

#include "radixmesh/error.hpp"

namespace radixmesh::bench {
namespace {

int report(const char* name, int code, const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "%s: error: %s\n", name, printable_text(line).c_str());
  return code;
}

}  // namespace

int driver_main(const char* name, const char* usage, int argc, char** argv, int (*body)(int, char**)) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      return driver_ok;
    }
  }
  try {
    return body(argc, argv);
  } catch (const Error& e) {
    return report(name, e.code() == ErrorCode::invalid_argument ? driver_bad_argument : driver_failed, e.what());
  } catch (const std::bad_alloc&) {
    return report(name, driver_failed, "out of host memory. fix: use a smaller --n");
  } catch (const std::exception& e) {
    return report(name, driver_failed, std::string("internal error: ") + e.what());
  } catch (...) {
    return report(name, driver_failed, "internal error: an unknown exception");
  }
}

void driver_argument_error(const std::string& name, const std::string& problem) {
  throw_error(ErrorCode::invalid_argument, problem, "see " + name + " --help");
}

std::string DriverArgs::value() {
  if (at_ + 1 >= argc_) driver_argument_error(name_, flag_() + " needs a value");
  return argv_[++at_];
}

void DriverArgs::unknown() const { driver_argument_error(name_, "unknown argument " + flag_()); }

double driver_number(const std::string& name, const std::string& flag, const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0') driver_argument_error(name, flag + " needs a number, got '" + text + "'");
  return value;
}

std::vector<int> driver_device_list(const std::string& name, const std::string& text) {
  std::vector<int> devices;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const long id = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || id < 0) driver_argument_error(name, "--devices '" + text + "' is not a list of device ids");
    devices.push_back(int(id));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return devices;
}

std::uint64_t driver_count(const std::string& name, const std::string& flag, const std::string& text) {
  if (text.rfind("2^", 0) == 0) {
    const double exponent = driver_number(name, flag, text.c_str() + 2);
    if (exponent < 0 || exponent > 62 || exponent != double(int(exponent)))
      driver_argument_error(name, flag + " " + text + " is not 2^k for a whole k in 0..62");
    return std::uint64_t(1) << int(exponent);
  }
  const double value = driver_number(name, flag, text.c_str());
  if (value < 0 || value > 4.6e18 || value != double(std::uint64_t(value)))
    driver_argument_error(name, flag + " " + text + " is not a whole count");
  return std::uint64_t(value);
}

}  // namespace radixmesh::bench
