// CPU multisplit: the reference every GPU result is checked against, and the host-thread backend.
// Count, scan, stable scatter (the paper's §4 skeleton with one subproblem per host thread): each
// thread counts its contiguous chunk, a bucket-major scan over (bucket, chunk) gives every chunk
// its start in every bucket, and each thread scatters its chunk in input order, so the result is
// stable. Bucket ids are computed twice (count, scatter) rather than stored: no n-sized scratch.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/backends.hpp"

namespace radixmesh::detail {
namespace {

constexpr std::size_t batch = 1024;           // ids computed per call of the type-erased functor
constexpr std::size_t min_keys_per_thread = 1 << 16;

template <class Body> void parallel_chunks(unsigned chunks, Body&& body) {
  if (chunks == 1) { body(0u); return; }
  std::vector<std::thread> workers;
  workers.reserve(chunks - 1);
  for (unsigned c = 1; c < chunks; ++c) workers.emplace_back([&body, c] { body(c); });
  body(0u);
  for (auto& w : workers) w.join();
}

// Copies element `from` of `src` to slot `to` of `dst`, for elements of `Bytes` bytes.
template <std::size_t Bytes> struct element { unsigned char bytes[Bytes]; };

template <std::size_t KeyBytes, std::size_t ValueBytes>
void scatter_chunk(const MultisplitArgs& args, BucketSource source, std::size_t begin, std::size_t end,
                   std::uint64_t* next) {
  using Key = element<KeyBytes>;
  const auto* keys_in = static_cast<const Key*>(args.keys_in);
  auto* keys_out = static_cast<Key*>(args.keys_out);
  std::uint32_t ids[batch];
  for (std::size_t base = begin; base < end; base += batch) {
    const std::size_t count = std::min(batch, end - base);
    source.ids(source.functor, args.keys_in, base, count, ids);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t id = std::min(ids[i], args.m - 1);
      const std::uint64_t to = next[id]++;
      keys_out[to] = keys_in[base + i];
      if constexpr (ValueBytes != 0) {
        using Value = element<ValueBytes>;
        static_cast<Value*>(args.values_out)[to] = static_cast<const Value*>(args.values_in)[base + i];
      }
    }
  }
}

template <std::size_t KeyBytes>
void scatter_chunk_by_value(const MultisplitArgs& args, BucketSource source, std::size_t begin, std::size_t end,
                            std::uint64_t* next) {
  switch (args.value_bytes) {
    case 0: return scatter_chunk<KeyBytes, 0>(args, source, begin, end, next);
    case 4: return scatter_chunk<KeyBytes, 4>(args, source, begin, end, next);
    default: return scatter_chunk<KeyBytes, 8>(args, source, begin, end, next);
  }
}

}  // namespace

BadBucket cpu_multisplit(const MultisplitArgs& args, BucketSource source, unsigned threads) {
  require(args.value_bytes == 0 || args.value_bytes == 4 || args.value_bytes == 8,
          "multisplit: values are " + std::to_string(args.value_bytes) + " bytes wide", "use 4- or 8-byte values");
  require(args.offsets != nullptr && !is_device_pointer(args.offsets),
          "multisplit: bucket_offsets is null or in device memory on the host backend",
          "pass host memory for bucket_offsets");
  require(args.keys_out == nullptr || args.n == 0 || !is_device_pointer(args.keys_out),
          "multisplit: keys_out is in device memory but the keys are on the host", "pass host memory for keys_out");
  const std::size_t n = args.n;
  const std::uint32_t m = args.m;
  const unsigned chunks = unsigned(std::clamp<std::size_t>(n / min_keys_per_thread, 1, std::max(1u, threads)));
  const std::size_t chunk_size = (n + chunks - 1) / chunks;
  auto chunk_begin = [&](unsigned c) { return std::min(n, std::size_t(c) * chunk_size); };

  // Counts, bucket-major per chunk: counts[c * m + b].
  std::vector<std::uint64_t> counts(std::size_t(chunks) * m, 0);
  std::vector<BadBucket> first_bad(chunks);
  parallel_chunks(chunks, [&](unsigned c) {
    std::uint64_t* count = &counts[std::size_t(c) * m];
    std::uint32_t ids[batch];
    for (std::size_t base = chunk_begin(c), end = chunk_begin(c + 1); base < end; base += batch) {
      const std::size_t n_ids = std::min(batch, end - base);
      source.ids(source.functor, args.keys_in, base, n_ids, ids);
      for (std::size_t i = 0; i < n_ids; ++i) {
        std::uint32_t id = ids[i];
        if (id >= m) {
          if (!first_bad[c].found()) first_bad[c] = {base + i, id, 0};
          id = m - 1;
        }
        ++count[id];
      }
    }
  });
  if (args.checked) {
    for (const auto& bad : first_bad)
      if (bad.found()) {
        BadBucket report = bad;
        const std::size_t key_bytes = size_of(args.type);
        std::memcpy(&report.key_bits, static_cast<const unsigned char*>(args.keys_in) + bad.index * key_bytes,
                    key_bytes);
        return report;  // before any output is written
      }
  }

  // Bucket-major exclusive scan: chunk c starts bucket b at offsets[b] + counts of earlier chunks.
  std::vector<std::uint64_t> next(counts.size());
  std::uint64_t running = 0;
  for (std::uint32_t b = 0; b < m; ++b) {
    args.offsets[b] = running;
    for (unsigned c = 0; c < chunks; ++c) {
      next[std::size_t(c) * m + b] = running;
      running += counts[std::size_t(c) * m + b];
    }
  }
  args.offsets[m] = running;
  if (args.keys_out == nullptr || n == 0) return {};

  parallel_chunks(chunks, [&](unsigned c) {
    std::uint64_t* chunk_next = &next[std::size_t(c) * m];
    const std::size_t begin = chunk_begin(c), end = chunk_begin(c + 1);
    switch (size_of(args.type)) {
      case 1: return scatter_chunk_by_value<1>(args, source, begin, end, chunk_next);
      case 2: return scatter_chunk_by_value<2>(args, source, begin, end, chunk_next);
      case 4: return scatter_chunk_by_value<4>(args, source, begin, end, chunk_next);
      default: return scatter_chunk_by_value<8>(args, source, begin, end, chunk_next);
    }
  });
  return {};
}

}  // namespace radixmesh::detail
