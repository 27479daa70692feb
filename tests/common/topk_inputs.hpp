// Inputs the top-k tests walk (CPU and GPU alike): the distributions, every key type.
#pragma once
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/generate.hpp"

namespace radixmesh::testing {

struct TopkInput {
  std::string name;
  GenerateOptions options;
  bool raw_bits = false;  // every bit pattern (NaN payloads, denormals) instead of `options`
};

inline std::vector<TopkInput> topk_inputs(std::uint64_t seed) {
  auto with = [seed](Distribution d) {
    GenerateOptions o;
    o.distribution = d;
    o.seed = seed;
    return o;
  };
  std::vector<TopkInput> inputs;
  inputs.push_back({"uniform", with(Distribution::uniform)});
  GenerateOptions narrow = with(Distribution::uniform);
  narrow.lo = 0.6, narrow.hi = 0.7;
  inputs.push_back({"U[0.6,0.7]", narrow});
  narrow.lo = 128.6, narrow.hi = 128.7;
  inputs.push_back({"U[128.6,128.7]", narrow});
  inputs.push_back({"normal", with(Distribution::normal)});
  GenerateOptions zipf = with(Distribution::zipf);
  zipf.zipf_s = 1.1;
  zipf.zipf_universe = 1 << 20;
  inputs.push_back({"zipf(1.1)", zipf});
  inputs.push_back({"sorted", with(Distribution::sorted)});
  inputs.push_back({"reverse", with(Distribution::reverse_sorted)});
  inputs.push_back({"all-equal", with(Distribution::all_equal)});
  inputs.push_back({"few-distinct", with(Distribution::few_distinct)});
  GenerateOptions specials = with(Distribution::uniform);
  specials.special_fraction = 0.25;  // NaN, +-inf, +-0, denormals
  inputs.push_back({"specials", specials});
  inputs.push_back({"bit-patterns", with(Distribution::uniform), true});
  return inputs;
}

// The input of topk_inputs(seed) called `name`; an unknown name is a test's own error.
inline TopkInput topk_input(std::uint64_t seed, const std::string& name) {
  for (auto& in : topk_inputs(seed))
    if (in.name == name) return in;
  throw_error(ErrorCode::invalid_argument, "topk_input: no input called '" + name + "'", "a name topk_inputs lists");
}

template <class T> std::vector<T> make_topk_input(const TopkInput& in, std::size_t n) {
  if (in.raw_bits) return random_bit_patterns<T>(n, in.options.seed);
  std::vector<T> v(n);
  GenerateOptions o = in.options;
  o.threads = 2;
  if (!is_floating(key_type_v<T>)) o.special_fraction = 0;  // integers have no NaN/inf: plain uniform
  try {
    generate(std::span<T>(v), o);
  } catch (const Error&) {  // a range too narrow for a 16-bit float: widen it, keeping its high bits
    o.hi = o.lo + 4;
    generate(std::span<T>(v), o);
  }
  return v;
}

// The k for a row of n: 1, 2, n/2, n-1, n (those that are valid, without repeats).
inline std::vector<std::size_t> topk_ks(std::size_t n) {
  std::vector<std::size_t> ks;
  for (std::size_t k : {std::size_t(1), std::size_t(2), n / 2, n - 1, n})
    if (k >= 1 && k <= n && (ks.empty() || ks.back() < k)) ks.push_back(k);
  return ks;
}

}  // namespace radixmesh::testing
