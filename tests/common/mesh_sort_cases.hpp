// The mesh sort's test cases, shared by the CPU-mesh, MPI and GPU tests: shards of a global input
// (a distribution, uneven and empty shards) and the expected result, which is a single-device
// stable sort of the shards concatenated (the CPU backend), cut back into the shards' counts.
// Values are each key's global index, so stability is checked element by element.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "radixmesh/context.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::testing {

struct MeshSortCase {
  std::string name;
  GenerateOptions gen;
};

// memcmp that takes empty ranges (whose pointers may be null) as equal.
inline bool same_bytes(const void* a, const void* b, std::size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

// Every adversarial distribution the issue names, plus uniform bit patterns.
inline std::vector<MeshSortCase> mesh_sort_cases() {
  std::vector<MeshSortCase> c;
  auto add = [&](std::string name, Distribution d) {
    GenerateOptions g;
    g.distribution = d;
    g.threads = 1;
    c.push_back({std::move(name), g});
    return &c.back().gen;
  };
  add("uniform", Distribution::uniform)->float_full_range = true;
  add("all-equal", Distribution::all_equal);
  add("zipf-1.0", Distribution::zipf)->zipf_s = 1.0;
  add("zipf-2.0", Distribution::zipf)->zipf_s = 2.0;
  add("sorted", Distribution::sorted);
  add("reverse", Distribution::reverse_sorted);
  add("few-distinct", Distribution::few_distinct)->distinct = 5;
  add("reduced-entropy-8", Distribution::reduced_entropy)->entropy_bits = 8;
  GenerateOptions* specials = add("specials", Distribution::uniform);
  specials->special_fraction = 0.2;
  return c;
}

// Shard sizes of one mesh: `total` keys spread unevenly, some devices with none.
inline std::vector<std::size_t> uneven_counts(std::size_t total, int devices, std::uint64_t salt) {
  std::vector<std::size_t> weights(static_cast<std::size_t>(devices));
  for (std::size_t d = 0; d < weights.size(); ++d) weights[d] = (d * 7 + salt) % 5;  // 0..4: some zero
  std::size_t sum = 0;
  for (auto w : weights) sum += w;
  if (sum == 0) weights[0] = sum = 1;
  std::vector<std::size_t> counts(weights.size());
  std::size_t given = 0;
  for (std::size_t d = 0; d < weights.size(); ++d) {
    counts[d] = d + 1 == weights.size() ? total - given : total * weights[d] / sum;
    given += counts[d];
  }
  return counts;
}

// One global input in bytes: keys of `type` and 8-byte values (the global index).
struct GlobalInput {
  KeyType type = KeyType::u32;
  std::vector<std::byte> keys;
  std::vector<std::uint64_t> index;
};

inline GlobalInput global_input(KeyType type, std::size_t n, GenerateOptions gen, std::uint64_t seed) {
  GlobalInput in;
  in.type = type;
  in.keys.resize(n * size_of(type));
  gen.seed = seed;
  if (n) generate(type, in.keys.data(), n, gen);
  in.index.resize(n);
  for (std::size_t i = 0; i < n; ++i) in.index[i] = i;
  return in;
}

// The expected result: one CPU device sorting everything, stable.
inline GlobalInput expected_sort(const GlobalInput& in, const SortOptions& options) {
  GlobalInput out = in;
  auto cpu = Context::cpu(1);
  const std::size_t n = in.index.size();
  visit_key_type(in.type, [&](auto tag) {
    using K = decltype(tag);
    SortOptions plain = options;
    plain.phases = nullptr;
    sort(cpu, std::span<K>(reinterpret_cast<K*>(out.keys.data()), n), std::span<std::uint64_t>(out.index), plain);
  });
  return out;
}

}  // namespace radixmesh::testing
