// The --buckets flag of `multisplit`, `shuffle` and `bench multisplit`: radix:SHIFT:BITS |
// delta:LO:HI:M | splitters:FILE | identity:M | hash:M, turned into the library's bucket function
// for key type K.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cli_common.hpp"
#include "radixmesh/buckets.hpp"

namespace radixmesh::cli {

extern const char* const buckets_fix;  // the fix every --buckets error suggests

std::vector<std::string> split_colons(const std::string& text);
// A whole number / a number inside --buckets; `what` names the field ("SHIFT", "LO", ...).
long long parse_bucket_integer(const std::string& text, const std::string& what);
double parse_bucket_number(const std::string& text, const std::string& what);

template <class K> K key_from_number(double value) {
  if constexpr (std::is_same_v<K, half_t>) return half_from_float(float(value));
  else if constexpr (std::is_same_v<K, bfloat16_t>) return bfloat16_from_float(float(value));
  else return K(value);
}

// Calls run(bucket_fn, m) with the bucket function `spec` names for keys of type K, and returns
// what run returns. Splitters are read from their file and stay alive until run returns.
template <class K, class Run> auto with_bucket_function(const std::string& spec, Run&& run) {
  const auto parts = split_colons(spec);
  require(!parts.empty(), "--buckets is empty", buckets_fix);
  if (parts[0] == "radix") {
    require(parts.size() == 3, "--buckets '" + spec + "' needs radix:SHIFT:BITS", buckets_fix);
    const long long shift = parse_bucket_integer(parts[1], "SHIFT"), bits = parse_bucket_integer(parts[2], "BITS");
    require(bits >= 0 && bits <= 16 && shift >= 0 && shift + bits <= 8 * (long long)sizeof(K),
            "--buckets '" + spec + "': the digit is not inside the " + std::to_string(8 * sizeof(K)) + "-bit key",
            "use 0 <= BITS <= 16 and SHIFT + BITS <= " + std::to_string(8 * sizeof(K)));
    return run(buckets::radix_digit{int(shift), int(bits)}, std::uint32_t(1) << bits);
  }
  if (parts[0] == "delta") {
    require(parts.size() == 4, "--buckets '" + spec + "' needs delta:LO:HI:M", buckets_fix);
    const long long m = parse_bucket_integer(parts[3], "M");
    require(m >= 1 && m <= buckets::max_buckets, "--buckets: M = " + parts[3] + " buckets", "use 1 <= M <= 65536");
    K lo, hi;
    if constexpr (key_traits<K>::is_float) {
      lo = key_from_number<K>(parse_bucket_number(parts[1], "LO"));
      hi = key_from_number<K>(parse_bucket_number(parts[2], "HI"));
    } else {
      lo = K(parse_bucket_integer(parts[1], "LO"));
      hi = K(parse_bucket_integer(parts[2], "HI"));
    }
    return run(buckets::delta<K>(lo, hi, std::uint32_t(m)), std::uint32_t(m));
  }
  if (parts[0] == "splitters") {
    require(parts.size() == 2, "--buckets '" + spec + "' needs splitters:FILE", buckets_fix);
    require_readable_file(parts[1], "--buckets splitters:FILE");
    HostArray boundaries = read_array(parts[1], key_type_v<K>);
    require(boundaries.size() + 1 <= buckets::max_buckets,
            "--buckets: " + std::to_string(boundaries.size()) + " splitters make too many buckets",
            "give at most 65535 splitters");
    return run(buckets::splitters<K>{boundaries.as<K>(), std::uint32_t(boundaries.size())},
               std::uint32_t(boundaries.size() + 1));
  }
  if (parts[0] == "identity") {
    require(parts.size() == 2, "--buckets '" + spec + "' needs identity:M", buckets_fix);
    const long long m = parse_bucket_integer(parts[1], "M");
    require(m >= 1 && m <= buckets::max_buckets, "--buckets: M = " + parts[1] + " buckets", "use 1 <= M <= 65536");
    if constexpr (std::is_integral_v<K>) {
      return run(buckets::identity{std::uint32_t(m)}, std::uint32_t(m));
    } else {
      throw_error(ErrorCode::invalid_argument,
                  "--buckets identity:M needs integer keys, and --in holds " + std::string(name_of(key_type_v<K>)),
                  "use radix, delta or splitters buckets for floating-point keys");
    }
  }
  if (parts[0] == "hash") {
    require(parts.size() == 2, "--buckets '" + spec + "' needs hash:M", buckets_fix);
    const long long m = parse_bucket_integer(parts[1], "M");
    require(m >= 1 && m <= buckets::max_buckets, "--buckets: M = " + parts[1] + " buckets", "use 1 <= M <= 65536");
    return run(buckets::hash{std::uint32_t(m)}, std::uint32_t(m));
  }
  throw_error(ErrorCode::invalid_argument, "--buckets '" + spec + "' names no bucket function", buckets_fix);
}

}  // namespace radixmesh::cli
