#include "bucket_spec.hpp"

#include <sstream>

namespace radixmesh::cli {

const char* const buckets_fix = "use --buckets radix:SHIFT:BITS, delta:LO:HI:M, splitters:FILE, identity:M or hash:M";

std::vector<std::string> split_colons(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  return parts;
}

long long parse_bucket_integer(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used, 0);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw_error(ErrorCode::invalid_argument, "--buckets: " + what + " '" + text + "' is not an integer", buckets_fix);
}

double parse_bucket_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw_error(ErrorCode::invalid_argument, "--buckets: " + what + " '" + text + "' is not a number", buckets_fix);
}

}  // namespace radixmesh::cli
