// radixmesh/device/multisplit.cuh — device-level multisplit for users who compose their own code.
//
//   std::size_t temp_bytes = 0;
//   radixmesh::device::multisplit(nullptr, temp_bytes, keys_in, keys_out, n, bucket_fn, m, offsets, stream);
//   ... allocate temp_bytes ...
//   radixmesh::device::multisplit(temp, temp_bytes, keys_in, keys_out, n, bucket_fn, m, offsets, stream);
//
// CUB's contract: stream-ordered, no allocation, no synchronization; the first call (temp ==
// nullptr) only writes temp_bytes. bucket_fn is any functor with a __device__
// `std::uint32_t operator()(K) const`, passed by value to the kernels. Stable. 1 <= m <= 65536,
// n < 2^32, keys of 1/2/4/8 bytes, values of 4 or 8 bytes (moved as raw bits). bucket_offsets
// (device, m + 1 entries, or nullptr) gets each bucket's start and n. Inputs and outputs must not
// overlap. Ids >= m go to bucket m - 1; when bad_index (device, 1 word) is given, the smallest
// index of such a key is written there (~0 when none) and, if there is one, keys_out and
// values_out are left untouched (the scatter passes see the verdict on the device and write
// nothing; bucket_offsets is then unspecified): the checked mode, at no extra pass.
//
// Design (paper §4.6 skeleton; Hopper-sized): three launches per pass, one header each under
// radixmesh/device/multisplit/.
//  1. counting pass (counting_pass.cuh): one block per chunk of tiles reads the keys once with
//     16-byte loads and counts ids in shared memory (m <= 32: one counter per thread and id;
//     m > 32: per-warp histogram copies), writing one column of the bucket-major matrix H.
//  2. exclusive scan of H (CUB DeviceScan): each chunk's start in every bucket.
//  3. scatter pass (scatter_pass.cuh): each block walks its chunk tile by tile (4096 keys of 4
//     bytes), the next tile streaming into a second shared-memory buffer (16-byte cp.async) while
//     this one is worked on; every warp ranks its keys window by window (§5.4: one ballot per id
//     bit gives each lane its peers, or one __match_any_sync at m <= 4; all lanes of an id bump
//     the warp's shared counter with the same value, §5.5); a block-wide bucket-major scan of the
//     warp counters gives every key its slot in the tile sorted by id; keys (and values) are
//     reordered in shared memory (§4.7, §5.6) and written out in tile order, so runs of one
//     bucket land as contiguous, coalesced stores. The kernel is a template on the id class (5
//     bits for m <= 32, 8 for m <= 256), so the ballots unroll with no run-time test.
//     Keys-only splits with 3 <= m <= 32 take the thread-counter scatter pass instead
//     (counter_scatter_pass.cuh: the same tiles ranked without ballots, each key by
//     one shared atomic on a packed 8-bit counter that only its thread touches, then a raking
//     scan; radix m = 32 0.99 ms against 1.18). Keys-only splits with m <= 2 take the warp-owned
//     scatter pass (warp_scatter_pass.cuh: each warp owns a contiguous eighth of the chunk, its
//     bucket cursors in registers, ranks from ballots with no shared counter and no block
//     barrier; the counting pass then writes one column of H per warp). Pairs keep the block-tile
//     pass (radixmesh::MultisplitTuning forces any; figures: docs/design/multisplit.md).
// plan.cuh cuts the input into chunks and launches one pass; bucket_functors.cuh stages a
// splitter table in shared memory and says which functors are cheap to compute again; warp_match.cuh is the peers primitive; tile_copy.cuh moves
// tiles to shared memory; common.cuh holds the shapes, the per-pass parameters and the rules
// that resolve the tuning.
// Reading keys twice plus writing them once is the 12 B/key floor the paper counts; the chunk
// size keeps H (written once, scanned, read once) to about 1/32 of the key traffic. A single pass
// with decoupled look-back would move the same 12 B/key (it too needs every bucket's total before
// it writes, so a histogram pass), see docs/design/multisplit.md.
// m <= 256 is one pass. 256 < m <= 4096: two stable passes over 6-bit digits of the id (low,
// then high: LSD) through a scratch copy, plus the counting pass over the full id for the
// offsets (and the checked mode). m > 4096 (to 65536): two passes over 8-bit digits, offsets
// from a histogram with warp-aggregated global atomics. Splitter functors (has_lookup_table)
// are searched in shared memory: each block copies the boundaries there first (up to 32 KB).
// Measured on an H200, 2^28 u32 keys, uniform (bench_multisplit --m 2,32,64,256,4096 at
// 6812eb98de4b; CUB or RB-sort in the same run; floor 0.77 ms keys, 1.29 ms pairs at 4.2 TB/s),
// our passes: radix m = 2 keys 0.85 ms (warp-owned; CUB 1.42), m = 32 0.99 (thread counters; CUB
// 1.48), m = 256 2.09 (block tiles; CUB 1.53), pairs m = 256 3.91 (CUB 2.30), delta m = 256 keys
// 2.36 (RB-sort 3.06). Counting pass 0.25 ms at m <= 32, 0.27 at m = 256, 0.39 at m = 4096. The
// m = 256 scatter pass (1.8 ms) is latency-bound (ncu: issue 42 %, half the shared wavefronts bank
// conflicts); a variant without its per-window counter chain measured slower (see
// scatter_pass.cuh). Budget, variants and evidence: docs/design/multisplit.md.
// Radix digits go to the digit engine. With buckets::radix_digit on raw key bits
// (integer keys: unsigned, or signed with the digit below the sign bit, the only bit their encoding
// flips; m = 2^bits), both the temp-size query and the run forward to
// cuda::multisplit_digit (radixmesh/device/multisplit_digit.hpp) with DigitEngine::automatic, the
// split the host API and the benchmark use: it runs CUB's onesweep pass for wide digits, where it
// measured faster (H200, 2^28 u32: m = 256 keys 1.53 against our passes' 2.08 ms, pairs 2.03
// against 3.90; bench_multisplit), and our passes below. Same outputs bit for bit (both are stable splits
// by the same digit; offsets m + 1), input untouched, temp_bytes is that engine's. Floating-point
// keys keep our passes: CUB orders -0.0 as +0.0, so its split of a digit of the encoding would
// differ (the host API's rule, splits_raw_digit in src/cuda/multisplit/multisplit_host.cu).
// MultisplitEngine::own_passes (the engine argument) forces our passes for any functor: the tests
// and diagnostics of our kernels need them. The last argument of every entry, a
// radixmesh::MultisplitTuning (radixmesh/multisplit_tuning.hpp), forces the ranking method, the
// scatter pass and its buffers (the default runs the measured rules; forwarded digits take it to
// the digit engine); temp_bytes does not depend on it, and a knob out of range returns
// cudaErrorInvalidValue. Forwarded calls need libradixmesh at link time (the digit engine is
// compiled there, with its one instantiation list); a CUDA failure inside CUB's pass comes back as
// a code, as every failure here does.
// Two-way partition (compaction), by-product of the m = 2 split: device::partition below (CUB
// style too; selected keys first, then the rest, both stable, and the selected count), and
// rxm::partition(ctx, ..., rxm::device_predicate{pred}) for device-resident spans at host level.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <span>
#include <string>
#include <type_traits>

#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device/multisplit/counting_pass.cuh"
#include "radixmesh/device/multisplit/plan.cuh"
#include "radixmesh/device/multisplit_digit.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::device {

// Which passes the device-level entry runs: `automatic` forwards radix digits of raw key bits to
// the digit engine (see above), `own_passes` always runs ours.
enum class MultisplitEngine { automatic, own_passes };

namespace multisplit_detail {

// The largest m whose full histogram the counting pass keeps in shared memory (per-warp copies,
// at most 48 KB): the offsets of a two-pass split up to it come from one such counting pass.
constexpr std::uint32_t max_counted_buckets = 4096;

// m <= 256: one pass. Larger m: two stable passes over the id's digits (LSD, low digit first)
// through a scratch copy, 6 + 6 bits up to m = 4096 and 8 + 8 bits above; the offsets (and the
// checked mode's bad index) come from a counting pass over the full id, or, above 4096 buckets,
// from a histogram with warp-aggregated global atomics.
template <class K, int ValueBytes, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const void* values_in,
                       void* values_out, std::size_t n, F bucket_fn, std::uint32_t m, std::uint32_t* bucket_offsets,
                       cudaStream_t stream, unsigned long long* bad_index, const MultisplitTuning& tuning) {
  static_assert(sizeof(K) == 1 || sizeof(K) == 2 || sizeof(K) == 4 || sizeof(K) == 8, "keys of 1, 2, 4 or 8 bytes");
  static_assert(ValueBytes == 0 || ValueBytes == 4 || ValueBytes == 8, "values of 4 or 8 bytes");
  // n stays below 2^32 - 2^16 so that slot arithmetic past the last tile cannot wrap.
  if (m == 0 || m > buckets::max_buckets || n > (std::size_t(1) << 32) - (std::size_t(1) << 16) ||
      !valid_tuning(tuning))
    return cudaErrorInvalidValue;
  const int sm_count = current_sm_count();
  const std::uint32_t n32 = std::uint32_t(n);
  const bool two_pass = m > max_one_pass_buckets;
  const bool counted = two_pass && m <= max_counted_buckets;  // offsets from the counting pass
  const int low_bits = m <= max_counted_buckets ? 6 : 8;
  const std::uint32_t low_buckets = 1u << low_bits;
  const std::uint32_t high_buckets = (m + low_buckets - 1) >> low_bits;
  std::size_t cub_bytes = 0;
  std::size_t pass_bytes = one_pass_temp_bytes<K>(n, m, sm_count, cub_bytes);
  if (two_pass) {
    pass_bytes = std::max(one_pass_temp_bytes<K>(n, low_buckets, sm_count, cub_bytes),
                          one_pass_temp_bytes<K>(n, high_buckets, sm_count, cub_bytes));
    if (counted) pass_bytes = std::max(pass_bytes, one_pass_temp_bytes<K>(n, m, sm_count, cub_bytes));
  }
  std::size_t histogram_cub_bytes = 0;
  if (two_pass && !counted)
    cub::DeviceScan::ExclusiveSum(nullptr, histogram_cub_bytes, static_cast<std::uint32_t*>(nullptr),
                                  static_cast<std::uint32_t*>(nullptr), int(m + 1));
  const std::size_t scratch_keys = two_pass ? align256(n * sizeof(K)) : 0;
  const std::size_t scratch_values = two_pass ? align256(n * ValueBytes) : 0;
  const std::size_t histogram_bytes = two_pass && !counted ? align256((m + 1) * 4) + align256(histogram_cub_bytes) : 0;
  const std::size_t needed = align256(pass_bytes) + scratch_keys + scratch_values + histogram_bytes;
  if (temp == nullptr) {
    temp_bytes = needed;
    return cudaSuccess;
  }
  if (temp_bytes < needed) return cudaErrorInvalidValue;
  cudaError_t status = cudaSuccess;
  if (bad_index != nullptr && (status = cudaMemsetAsync(bad_index, 0xFF, sizeof *bad_index, stream)) != cudaSuccess)
    return status;
  if (!two_pass)
    return run_one_pass<K, ValueBytes>(temp, keys_in, keys_out, values_in, values_out, n32, bucket_fn, m, 0,
                                       0xFFFFFFFFu, m, bucket_offsets, bad_index, bad_index, sm_count, stream, tuning);

  unsigned char* cursor = static_cast<unsigned char*>(temp) + align256(pass_bytes);
  K* scratch_k = reinterpret_cast<K*>(cursor);
  void* scratch_v = cursor + scratch_keys;
  if (counted && (bucket_offsets != nullptr || bad_index != nullptr)) {
    // The full id's counts (and the check), before the passes reuse the temp storage.
    status = run_one_pass<K, 0>(temp, keys_in, nullptr, nullptr, nullptr, n32, bucket_fn, m, 0, 0xFFFFFFFFu, m,
                                bucket_offsets, bad_index, nullptr, sm_count, stream, tuning);
    if (status != cudaSuccess) return status;
  }
  unsigned long long* pass_check = counted ? nullptr : bad_index;  // checked once
  if (keys_out != nullptr) {
    status = run_one_pass<K, ValueBytes>(temp, keys_in, scratch_k, values_in, scratch_v, n32, bucket_fn, m, 0,
                                         low_buckets - 1, low_buckets, nullptr, pass_check, bad_index, sm_count,
                                         stream, tuning);
    if (status != cudaSuccess) return status;
    status = run_one_pass<K, ValueBytes>(temp, scratch_k, keys_out, scratch_v, values_out, n32, bucket_fn, m, low_bits,
                                         0xFFFFFFFFu, high_buckets, nullptr, nullptr, bad_index, sm_count, stream,
                                         tuning);
    if (status != cudaSuccess) return status;
  } else if (pass_check != nullptr) {  // histogram only: the check still needs one look at every key
    status = run_one_pass<K, ValueBytes>(temp, keys_in, nullptr, nullptr, nullptr, n32, bucket_fn, m, 0,
                                         low_buckets - 1, low_buckets, nullptr, pass_check, nullptr, sm_count,
                                         stream, tuning);
    if (status != cudaSuccess) return status;
  }
  if (bucket_offsets != nullptr && !counted) {
    auto* histogram = reinterpret_cast<std::uint32_t*>(cursor + scratch_keys + scratch_values);
    void* histogram_cub = reinterpret_cast<unsigned char*>(histogram) + align256((m + 1) * 4);
    if ((status = cudaMemsetAsync(histogram, 0, (m + 1) * 4, stream)) != cudaSuccess) return status;
    if (n > 0) {
      const unsigned blocks = unsigned(std::min<std::size_t>((n + block_threads - 1) / block_threads, 16 * sm_count));
      large_histogram_kernel<<<blocks, block_threads, 0, stream>>>(keys_in, n32, bucket_fn, m, histogram);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    }
    status = cub::DeviceScan::ExclusiveSum(histogram_cub, histogram_cub_bytes, histogram, bucket_offsets, int(m + 1),
                                           stream);
  }
  return status;
}

// Whether the entry forwards (bucket_fn, m) on keys K to the digit engine: radix digits that are
// digits of the raw bits (encode_key is the identity on unsigned keys and flips only the sign bit
// of signed ones; floats excluded, see the header comment), inside the key, with m = 2^bits so
// that no id is out of range (the checked mode finds nothing).
template <class K, class F> constexpr bool may_split_raw_digit =
    std::is_same_v<F, buckets::radix_digit> && std::is_integral_v<K> && !std::is_same_v<K, bool>;
template <class K> bool splits_raw_digit(const buckets::radix_digit& digit, std::uint32_t m) {
  constexpr int width = int(sizeof(K)) * 8;
  if (digit.bits < 0 || digit.bits > 16 || digit.shift < 0 || digit.shift + digit.bits > width) return false;
  if (m != digit.num_buckets()) return false;
  return !std::is_signed_v<K> || digit.shift + digit.bits < width;
}

// The public entries' dispatch: the digit engine where it applies, else our passes.
template <class K, int ValueBytes, class F>
cudaError_t multisplit_entry(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                             const void* values_in, void* values_out, std::size_t n, F bucket_fn, std::uint32_t m,
                             std::uint32_t* bucket_offsets, cudaStream_t stream, unsigned long long* bad_index,
                             MultisplitEngine engine, const MultisplitTuning& tuning) {
  if constexpr (may_split_raw_digit<K, F>) {
    if (engine == MultisplitEngine::automatic && splits_raw_digit<K>(bucket_fn, m)) {
      constexpr int key_bits = int(sizeof(K)) * 8;
      using U = radixmesh::cuda::digit_key_t<key_bits>;
      const cudaError_t status = radixmesh::cuda::multisplit_digit<key_bits, ValueBytes>(
          temp, temp_bytes, reinterpret_cast<const U*>(keys_in), reinterpret_cast<U*>(keys_out), values_in,
          values_out, n, bucket_fn.shift, bucket_fn.bits, bucket_offsets, stream,
          radixmesh::cuda::DigitEngine::automatic, tuning);
      if (status != cudaSuccess || temp == nullptr || bad_index == nullptr) return status;
      return cudaMemsetAsync(bad_index, 0xFF, sizeof *bad_index, stream);  // checked: no id is >= m = 2^bits
    }
  }
  return multisplit<K, ValueBytes>(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, bucket_fn, m,
                                   bucket_offsets, stream, bad_index, tuning);
}

// The m = 2 bucket functor of a partition: selected keys to bucket 0, the rest to bucket 1.
template <class Predicate> struct two_way_buckets {
  Predicate predicate;
  template <class K> __device__ std::uint32_t operator()(K key) const { return predicate(key) ? 0u : 1u; }
};

// Temp: the split's 3 offsets (one 256-byte slot, so the passes' temp stays aligned), then the
// passes' own temp. The selected count is offsets[1], copied out in stream order.
constexpr std::size_t partition_offsets_bytes = 256;
template <class K, int ValueBytes, class Predicate>
cudaError_t partition(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const void* values_in,
                      void* values_out, std::size_t n, Predicate predicate, std::uint32_t* selected_count,
                      cudaStream_t stream, const MultisplitTuning& tuning) {
  const two_way_buckets<Predicate> two_way{predicate};
  std::size_t pass_bytes = 0;
  cudaError_t status = multisplit<K, ValueBytes>(nullptr, pass_bytes, keys_in, keys_out, values_in, values_out, n,
                                                 two_way, 2, nullptr, stream, nullptr, tuning);
  if (status != cudaSuccess) return status;
  if (temp == nullptr) {
    temp_bytes = partition_offsets_bytes + pass_bytes;
    return cudaSuccess;
  }
  if (temp_bytes < partition_offsets_bytes + pass_bytes || (keys_out == nullptr && n != 0)) return cudaErrorInvalidValue;
  auto* offsets = static_cast<std::uint32_t*>(temp);
  status = multisplit<K, ValueBytes>(static_cast<unsigned char*>(temp) + partition_offsets_bytes, pass_bytes, keys_in,
                                     keys_out, values_in, values_out, n, two_way, 2, offsets, stream, nullptr, tuning);
  if (status != cudaSuccess || selected_count == nullptr) return status;
  return cudaMemcpyAsync(selected_count, offsets + 1, sizeof *selected_count, cudaMemcpyDeviceToDevice, stream);
}

// Makes `device` current for a host-level call and restores the previous one on scope exit.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) cudaSetDevice(device);
  }
  ~CurrentDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = -1;
};

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw_error(ErrorCode::device, std::string("partition: ") + call + " failed: " + cudaGetErrorName(status) + " (" +
                                       cudaGetErrorString(status) + ")",
                "check the GPU and driver with `radixmesh info` and nvidia-smi");
}

}  // namespace multisplit_detail

// Keys only.
template <class K, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n, F bucket_fn,
                       std::uint32_t m, std::uint32_t* bucket_offsets, cudaStream_t stream = 0,
                       unsigned long long* bad_index = nullptr, MultisplitEngine engine = MultisplitEngine::automatic,
                       const MultisplitTuning& tuning = {}) {
  return multisplit_detail::multisplit_entry<K, 0>(temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, bucket_fn,
                                                   m, bucket_offsets, stream, bad_index, engine, tuning);
}

// Keys and values (V of 4 or 8 bytes).
template <class K, class V, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                       V* values_out, std::size_t n, F bucket_fn, std::uint32_t m, std::uint32_t* bucket_offsets,
                       cudaStream_t stream = 0, unsigned long long* bad_index = nullptr,
                       MultisplitEngine engine = MultisplitEngine::automatic, const MultisplitTuning& tuning = {}) {
  return multisplit_detail::multisplit_entry<K, int(sizeof(V))>(temp, temp_bytes, keys_in, keys_out, values_in,
                                                                values_out, n, bucket_fn, m, bucket_offsets, stream,
                                                                bad_index, engine, tuning);
}

// Histogram only (as bucket offsets: counts are offsets[b + 1] - offsets[b]).
template <class K, class F>
cudaError_t multisplit_offsets(void* temp, std::size_t& temp_bytes, const K* keys_in, std::size_t n, F bucket_fn,
                               std::uint32_t m, std::uint32_t* bucket_offsets, cudaStream_t stream = 0,
                               unsigned long long* bad_index = nullptr, const MultisplitTuning& tuning = {}) {
  return multisplit_detail::multisplit<K, 0>(temp, temp_bytes, keys_in, nullptr, nullptr, nullptr, n, bucket_fn, m,
                                             bucket_offsets, stream, bad_index, tuning);
}

// Stable two-way partition (compaction), keys only: keys_out gets the keys with predicate(key)
// true, in input order, then the others, in input order; *selected_count (device, one word, or
// nullptr) how many were true. predicate: any functor with a __device__ `bool operator()(K) const`,
// passed by value. CUB's contract as above (temp == nullptr: temp_bytes only; too little temp:
// cudaErrorInvalidValue, nothing written). It is the m = 2 multisplit with id = predicate(key) ? 0
// : 1, so it runs our passes (m <= 2 keys: the warp-owned scatter pass; pairs: the block-tile one).
template <class K, class Predicate>
cudaError_t partition(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n,
                      Predicate predicate, std::uint32_t* selected_count, cudaStream_t stream = 0,
                      const MultisplitTuning& tuning = {}) {
  return multisplit_detail::partition<K, 0>(temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, predicate,
                                            selected_count, stream, tuning);
}

// Keys and values (V of 4 or 8 bytes): values move with their keys.
template <class K, class V, class Predicate>
cudaError_t partition(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                      V* values_out, std::size_t n, Predicate predicate, std::uint32_t* selected_count,
                      cudaStream_t stream = 0, const MultisplitTuning& tuning = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::device::partition: values must be 4 or 8 bytes wide");
  return multisplit_detail::partition<K, int(sizeof(V))>(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                                         predicate, selected_count, stream, tuning);
}

}  // namespace radixmesh::device

namespace radixmesh {

// Host level, device-resident keys (radixmesh/multisplit.hpp's partition, for a predicate that runs
// on the GPU): device::partition on the context's stream of the keys' device, temp from
// DeviceBuffer, then the count read back (the call returns when the keys are written). Keys on the
// host, a CPU context or keys on another device throw rxm::Error naming the fix. options: as for
// the other overload (ids of a partition are never out of range, so `checked` has nothing to do;
// `tuning` is passed on).
template <class K, class P>
std::size_t partition(Context& ctx, std::span<const K> keys_in, std::span<K> keys_out, device_predicate<P> predicate,
                      const MultisplitOptions& options = {}) {
  namespace ms = device::multisplit_detail;
  require(keys_out.size() == keys_in.size(),
          "partition: keys_out has " + std::to_string(keys_out.size()) + " entries for " +
              std::to_string(keys_in.size()) + " keys",
          "pass a keys_out span as long as keys_in");
  detail::validate_tuning(options.tuning, "partition");
  const detail::DevicePlace place = detail::device_place(ctx, "partition", keys_in.data(), keys_out.data(),
                                                         keys_in.size());
  if (keys_in.empty()) return 0;
  ms::CurrentDevice current(place.device);
  const auto stream = static_cast<cudaStream_t>(place.stream);
  std::size_t temp_bytes = 0;
  ms::check_cuda(device::partition(nullptr, temp_bytes, keys_in.data(), keys_out.data(), keys_in.size(),
                                   predicate.predicate, nullptr, stream, options.tuning),
                 "the temp-size query");
  constexpr std::size_t count_bytes = 256;  // the count, then the temp (kept 256-aligned)
  DeviceBuffer temp(place.device, count_bytes + temp_bytes);
  auto* count = static_cast<std::uint32_t*>(temp.data());
  ms::check_cuda(device::partition(static_cast<unsigned char*>(temp.data()) + count_bytes, temp_bytes, keys_in.data(),
                                   keys_out.data(), keys_in.size(), predicate.predicate, count, stream, options.tuning),
                 "device::partition");
  std::uint32_t selected = 0;
  ms::check_cuda(cudaMemcpyAsync(&selected, count, sizeof selected, cudaMemcpyDeviceToHost, stream),
                 "reading the selected count");
  ms::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return selected;
}

}  // namespace radixmesh
