// The row-stream path of the GPU top-k: which problems take it, its segments and shared memory,
// and its launches (kernels in topk_row_stream.cuh).
#include "cuda/topk/topk_row_stream.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_stream.cuh"

namespace radixmesh::detail::topk_gpu {

int multiprocessors(int device) {
  int sms = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

namespace {

constexpr std::size_t kMaxChunkRowsStream = 65535;  // grid.y

// Every knob of the other paths at its automatic value: a problem that sets one (tests, A/B
// benchmarks) asks for those paths, so the automatic choice leaves it to them.
bool other_knobs_automatic(const device::TopkTuning& t) {
  const device::TopkTuning d;
  return t.delegate_log2 == d.delegate_log2 && t.block_select == d.block_select &&
         t.delegate_block_select == d.delegate_block_select && t.delegate_vector_loads == d.delegate_vector_loads &&
         t.delegate_select_full_grid == d.delegate_select_full_grid &&
         t.delegate_pass_five_blocks == d.delegate_pass_five_blocks && t.sample_select == d.sample_select &&
         t.start == d.start && t.delegate_beta == d.delegate_beta;
}

// Lets every kernel of key type T use up to kMaxStreamShared bytes of dynamic shared memory
// (above the 48 KiB default), once per device. Always the same value: calls with different k on
// other threads must not lower it under a launch in flight.
template <class T> void allow_shared(int device) {
  once_per_device(device, [] {
    const int b = int(kMaxStreamShared);
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream<T, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream_merge<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream_merge<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_stream_merge<T, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
  });
}

// Blocks of row_stream resident on `device` at once with this shared memory (occupancy API).
// Occupancy depends on the kernel (key width, argmax, guess) and the shared bytes only, so the
// answer is kept under exactly that key: the host work of every call counts.
std::uint64_t resident_stream_blocks(int device, KeyType type, bool argmax, bool guess, std::size_t shared) {
  static std::mutex guard;
  static std::map<std::tuple<int, int, bool, bool, std::size_t>, int> known;
  const int width = int(size_of(type));
  const auto key = std::make_tuple(device, width, argmax, guess, shared);
  {
    std::lock_guard lock(guard);
    if (auto it = known.find(key); it != known.end()) return std::uint64_t(it->second);
  }
  const int sms = multiprocessors(device);
  int per_sm = 0;
  with_stream_type(width == 2 ? KeyType::bf16 : KeyType::f32, [&](auto tag) {
    using T = decltype(tag);
    allow_shared<T>(device);
    const auto kernel = argmax ? row_stream<T, true> : guess ? row_stream<T, false, true> : row_stream<T, false>;
    RXM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kStreamThreads, shared));
  });
  const int blocks = std::max(1, sms) * std::max(1, per_sm);
  std::lock_guard lock(guard);
  known.emplace(key, blocks);
  return std::uint64_t(blocks);
}

}  // namespace

bool takes_row_stream(const device::TopkProblem& pr) {
  const int choice = pr.tuning.row_stream;
  const std::size_t longest = pr.row_offsets ? pr.max_row_length : pr.row_length;
  const bool possible = (size_of(pr.type) == 2 || size_of(pr.type) == 4) && pr.k <= kRowStreamMaxK &&
                        longest < (std::size_t(1) << 31);
  if (!possible || choice == 0) return false;
  return choice == 1 || (longest <= kRowStreamMaxRow && other_knobs_automatic(pr.tuning));
}

RowStreamPlan plan_row_stream(const device::TopkProblem& pr, int device) {
  RowStreamPlan g;
  const bool argmax = pr.k == 1;
  const std::uint64_t longest = longest_row(pr);
  g.k_pad = unsigned(std::bit_ceil(pr.k));
  g.index_bits = int(std::bit_width(longest));  // positions <= longest - 1 < 2^index_bits - 1
  // The guessed seed at every k (the argmax has none): call GJ (one H100, bench_topk_llm --rows
  // 4096,256,64 --vocab 32000,128256,256000 --k 1024,50 --dtype bf16,f32) took k = 1024 1.13-1.36x
  // and k = 50 up to 1.22x faster than the bound-less start and the bound, in the same run. Its
  // kernels cost ~1 us where no segment guesses (call GL: 8 x 32000 bf16 k = 50, segments of ~4600
  // values, 17 -> 19 us), so they run only where one can.
  const bool estimate = !argmax && pr.tuning.row_stream_estimate != 0;
  if (argmax) {
    g.capacity = 1, g.compact_above = 1;
  } else {
    // Room for a whole tile above the compaction mark, plus the unaligned head and tail. The mark,
    // 2 k (at least 64): each compaction raises the threshold to the k-th value seen, so a random
    // row sends ~k ln(n / k) keys in all, and a low mark keeps the threshold near it (fewer
    // vectors past the filter) at the price of a few small compactions (bitonic up to
    // kSortedKeepMax keys). bench_topk_llm --compact (H200, 4096 x 128256 bf16, k = 50): marks
    // 100 / 256 / 1024 took 0.522 / 0.601 / 0.624 ms (bench/results/gpu-check/h200-aa-sweep.log).
    g.compact_above = std::max(2 * unsigned(pr.k), 64u);
    if (pr.tuning.row_stream_compact > 0)
      g.compact_above =
          std::clamp(unsigned(pr.tuning.row_stream_compact), std::max(2 * unsigned(pr.k), 64u), 2 * kRowStreamMaxK);
    g.capacity = unsigned(kStreamTile) + g.compact_above + unsigned(kStreamHeadTail);
  }
  g.shared_bytes = std::size_t(g.capacity + stream_keep_entries(g.k_pad)) * sizeof(unsigned long long);
  if (g.shared_bytes > kMaxStreamShared)
    throw_error(ErrorCode::internal, "device::topk: the row-stream plan needs more shared memory than it allows",
                "report this with the problem's k and row length");
  // Segments: enough blocks for one wave of the device when rows are few, each segment at least a
  // tile and (k > 1) at least 16 k values, so the merge reads at most 1/16 of the row again; from
  // k > 512, 32 k: fewer, longer segments and a shorter merge (one H100, call HW, bench_topk_llm
  // --rows 64,32 --vocab 128256,256000 --k 1024 --dtype bf16,f32 --segment-min 0,...,65536, us:
  // 64 x 128256 bf16 57.5 -> 53.8, f32 59.1 -> 56.4, 32 x 256000 bf16 61.9 -> 57.1, f32 65.7 ->
  // 59.1, 32 x 128256 bf16 46.9 -> 47.3; k = 1024 the only k timed).
  // Occupancy with the guess kernel where the whole row could guess (its registers may cost a block).
  const bool may_guess = estimate && guesses_seed(unsigned(pr.k), longest);
  const std::uint64_t resident = resident_stream_blocks(device, pr.type, argmax, may_guess, g.shared_bytes);
  const std::uint64_t per_k = pr.k > 512 ? 32 : 16;
  std::uint64_t min_segment = argmax ? std::uint64_t(kStreamTile) : std::max<std::uint64_t>(kStreamTile, per_k * pr.k);
  if (pr.tuning.row_stream_segment > 0) min_segment = std::uint64_t(pr.tuning.row_stream_segment);
  // Rounded down: a second, partial wave would double the time of the whole launch.
  std::uint64_t segments = 1;
  if (pr.rows < resident)
    segments = std::clamp<std::uint64_t>(resident / pr.rows, 1, (longest + min_segment - 1) / min_segment);
  g.segment_length = (((longest + segments - 1) / segments) + 15) / 16 * 16;
  g.segments = unsigned((longest + g.segment_length - 1) / g.segment_length);
  g.segment_slots = argmax ? 1u : g.compact_above;
  g.guess_segments = estimate && guesses_seed(unsigned(pr.k), g.segment_length);
  g.guess_merge = estimate && g.segments > 1 && guesses_seed(unsigned(pr.k), std::uint64_t(g.segments) * g.segment_slots);
  g.temp_bytes = g.segments > 1 ? pr.rows * g.segments * g.segment_slots * sizeof(unsigned long long) : 0;
  return g;
}

void launch_row_stream(const RowStreamPlan& g, void* temp, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int device) {
    allow_shared<T>(device);
    p.k_pad = g.k_pad, p.capacity = g.capacity, p.compact_above = g.compact_above;
    p.segments = g.segments, p.segment_length = g.segment_length;
    p.index_bits = g.index_bits;
    p.segment_slots = g.segment_slots;
    p.segment_keys = static_cast<unsigned long long*>(temp);
    const bool argmax = pr.k == 1;
    for (std::size_t r0 = 0; r0 < pr.rows; r0 += kMaxChunkRowsStream) {
      p.row0 = r0;
      const unsigned chunk = unsigned(std::min(kMaxChunkRowsStream, pr.rows - r0));
      const dim3 grid(g.segments, chunk);
      if (argmax) row_stream<T, true><<<grid, kStreamThreads, g.shared_bytes, stream>>>(p);
      else if (g.guess_segments) row_stream<T, false, true><<<grid, kStreamThreads, g.shared_bytes, stream>>>(p);
      else row_stream<T, false><<<grid, kStreamThreads, g.shared_bytes, stream>>>(p);
      RXM_CUDA_CHECK(cudaGetLastError());
      if (g.segments == 1) continue;
      const dim3 merges(1, chunk);
      if (argmax) row_stream_merge<T, true><<<merges, kStreamThreads, g.shared_bytes, stream>>>(p);
      else if (g.guess_merge) row_stream_merge<T, false, true><<<merges, kStreamThreads, g.shared_bytes, stream>>>(p);
      else row_stream_merge<T, false><<<merges, kStreamThreads, g.shared_bytes, stream>>>(p);
      RXM_CUDA_CHECK(cudaGetLastError());
    }
    if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

}  // namespace radixmesh::detail::topk_gpu
