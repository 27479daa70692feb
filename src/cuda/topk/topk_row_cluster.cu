// The row-cluster path of the GPU top-k: which problems take it, its cluster size and shared
// memory, and its launch (the kernel is in topk_row_cluster.cuh).
#include "cuda/topk/topk_row_cluster.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_cluster.cuh"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxChunkRowsCluster = 65535;  // grid.y
// Values a block's slice aims at: 2 per thread; more blocks per row shorten every pass. Several
// rows share the GPU: blocks per row are halved (down to one, while the slice stays within
// kClusterMaxHalvedSlice and the shared memory) while the launch has more blocks than
// kClusterFewRowsBlocks (up to kClusterMaxRows rows) or kClusterManyRowsBlocks (more rows).
// bench_topk_llm --k 1024 --row-cluster 1 --segment-min 2048,...,32768 (call AY, H200, bf16;
// slices below vocab / 16 take 16 blocks): 1 x 32000 18 / 20 / 27 / 44 / 55 us; 8 x 32000 25 /
// 20 / 27 / 44 / 55; 8 x 128256 35 (16 blocks) / 30 (8) / 46 (4); 8 x 256000 51 (16) / 48 (8);
// 4 x 256000 34 (16) / 48 (8). Call AV (the rule for more rows, below): 32 x 32000 45 us in 4
// blocks, 48 in 2; 64 x 32000 48 in 2 blocks. A count of blocks, not of clusters the device runs
// at once (cudaOccupancyMaxActiveClusters), sets the halving: that count admits two 1024-thread
// blocks on one SM, which lost (128 x 32000 in 2-block clusters 82 us against 61 on the
// row-stream blocks, call AV), and keeps 8 rows on 16-block clusters (call AZ: 8 x 128256 bf16
// 35 us, against 30 in 8-block clusters in call AY).
constexpr std::uint64_t kClusterSliceTarget = 2048;
constexpr std::size_t kClusterMaxRows = 16;
constexpr std::uint64_t kClusterFewRowsBlocks = 64, kClusterManyRowsBlocks = 128;
constexpr std::uint64_t kClusterMaxHalvedSlice = 32768;
// More than kClusterMaxRows rows with k up to this many take slices of any length that fits the
// shared memory, halved down to one wave, and that one wave automatically (below): with the bound
// a pass reads the short list of keys that reach it, not the slice, and ~k / blocks winners a
// block sort quickly. k = 1024 keeps the caps: its 256 winners a block lost to the row-stream
// blocks. One H100, call GE (`bench_topk_llm --rows 1,8,32,64 --vocab 32000,128256,256000 --k
// 256,1024 --dtype bf16,f32`, the rule without the caps against the rule with them, us): k = 256
// 64 x 128256 bf16 75-81 -> 43 (2-block clusters), 32 x 128256 bf16 65 -> 55 and f32 65 -> 55 (4
// blocks), 32 x 256000 bf16 86 -> 76 (4); k = 1024 32 x 128256 bf16 59 -> 75, f32 70 -> 75, 32 x
// 256000 bf16 74 -> 98.
constexpr std::uint32_t kClusterLongSlicesMaxK = 256;
// Up to 16 rows, slices from this many values gather the blocks' lists into one block
// (TopkTuning::row_cluster_gather), which selects, sorts and writes the row alone. One H100, call
// GU (`bench_topk_llm --rows 1,8,16 --vocab 32000,128256,256000 --k 256,1024 --dtype bf16,f32`,
// gathered against the cluster's passes in the same run, us): 16 x 256000 (4 blocks of 64000
// values) bf16 k = 256 45 against 54, k = 1024 57 / 66, f32 46 / 56, 58 / 67. Shorter slices in
// more blocks lost at k = 1024 (1 x 128256 f32 30 against 24, 8 x 256000 bf16 41 / 36: block 0's
// select, sort and writes of the gathered keys take 18 us, `bench/phases/marked_kernel.sh row_cluster`)
// and were mixed at k = 256 (1 x 128256 bf16 23 / 21, f32 19 / 23).
constexpr std::uint64_t kClusterGatherMinSlice = 48000;
bool long_slices(const device::TopkProblem& pr) { return pr.rows > kClusterMaxRows && pr.k <= kClusterLongSlicesMaxK; }

// The most a block takes: the largest lists and a slice of the longest automatic row of 32-bit
// keys over 8 blocks (about 176 KiB, besides the kernel's static 18 KiB).
constexpr std::size_t kMaxClusterShared = cluster_shared_bytes(kRowStreamMaxK, kRowStreamMaxRow / 8, 4);

// Per device, once: whether it launches clusters, and the kernels' attributes (the same values
// every time, so a launch in flight on another thread never sees them lowered).
template <class T> bool prepare(int device) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> state[kMaxDevices] = {};  // 0 unknown, 1 yes, 2 no
  if (device >= 0 && device < kMaxDevices)
    if (const int s = state[device].load(std::memory_order_acquire)) return s == 1;
  int cluster = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, device));
  if (cluster) {
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_cluster<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(kMaxClusterShared)));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_cluster<T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  if (device >= 0 && device < kMaxDevices) state[device].store(cluster ? 1 : 2, std::memory_order_release);
  return cluster != 0;
}

bool prepared(const device::TopkProblem& pr, int device) {
  bool ok = false;
  with_stream_type(pr.type, [&](auto tag) { ok = prepare<decltype(tag)>(device); });
  return ok;
}

// How many clusters of `blocks` blocks with this shared memory the device runs at once
// (cudaOccupancyMaxActiveClusters: a cluster's blocks must fit in one GPC at once; 0: none), once
// per (device, key width, blocks, shared bytes). The device must be prepared().
int active_clusters(const device::TopkProblem& pr, int device, unsigned blocks, std::size_t shared) {
  if (shared > kMaxClusterShared) return 0;
  static std::mutex guard;
  static std::map<std::tuple<int, std::size_t, unsigned, std::size_t>, int> known;
  const auto key = std::make_tuple(device, size_of(pr.type), blocks, shared);
  {
    std::lock_guard lock(guard);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  int clusters = 0;
  with_stream_type(pr.type, [&](auto tag) {
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = blocks, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks, 1);
    config.blockDim = dim3(kClusterThreads);
    config.dynamicSmemBytes = shared;
    config.attrs = &cluster;
    config.numAttrs = 1;
    RXM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, row_cluster<decltype(tag)>, &config));
  });
  std::lock_guard lock(guard);
  known.emplace(key, clusters);
  return clusters;
}

RowClusterPlan plan_cluster(const device::TopkProblem& pr, int device) {
  RowClusterPlan g;
  const std::uint64_t longest = longest_row(pr);
  g.k_pad = unsigned(std::bit_ceil(pr.k));
  g.list = (g.k_pad + 1) / 2 * 2;
  g.index_bits = int(std::bit_width(longest));
  const std::uint64_t target =
      pr.tuning.row_stream_segment > 0 ? std::uint64_t(pr.tuning.row_stream_segment) : kClusterSliceTarget;
  auto shape = [&](std::uint64_t blocks) {
    g.blocks = unsigned(blocks);
    g.slice = ((longest + blocks - 1) / blocks + 15) / 16 * 16;
    g.shared_bytes = cluster_shared_bytes(g.list, g.slice, size_of(pr.type));
  };
  std::uint64_t blocks = std::clamp<std::uint64_t>((longest + target - 1) / target, 1, kMaxClusterBlocks);
  const std::uint64_t most = pr.rows <= kClusterMaxRows ? kClusterFewRowsBlocks : kClusterManyRowsBlocks;
  if (pr.tuning.row_stream_segment <= 0)
    while (blocks > 1 && pr.rows * blocks > most) {
      shape(blocks / 2);
      if ((g.slice > kClusterMaxHalvedSlice && !long_slices(pr)) || g.shared_bytes > kMaxClusterShared) break;
      blocks /= 2;
    }
  shape(blocks);
  // Above 8 blocks (non-portable), only where such clusters fit the device.
  if (g.blocks > 8 && (!prepared(pr, device) || active_clusters(pr, device, g.blocks, g.shared_bytes) == 0)) shape(8);
  const int gather = pr.tuning.row_cluster_gather;
  g.gather = gather == 1 || (gather < 0 && pr.rows <= kClusterMaxRows && g.slice >= kClusterGatherMinSlice);
  return g;
}

}  // namespace

// Where k > 128 takes the clusters automatically: up to 16 rows; beyond, only in one wave of one
// block per SM (rows x blocks <= kClusterManyRowsBlocks) of slices up to kClusterMaxAutoSlice
// values, or of any slice where k <= kClusterLongSlicesMaxK (above). Call AV (H200, bench_topk_llm --rows 16,32,64,128 --vocab 32000,128256 --k 256,1024
// --row-cluster 0|1 --segment-min 2048,...,32768), k = 1024, bf16, row-stream against the best
// cluster (blocks):
// 16 x 32000 56 / 28 us (4); 32 x 32000 56 / 45 (4); 64 x 32000 58 / 48 (2); 128 x 32000 61 / 62
// (1); 32 x 128256 77 / 73 (8, two waves); 64 x 128256 86 / 120. Slices of 32000 lost from 32 rows
// on (32 x 128256: 91 against 77 us).
constexpr std::uint64_t kClusterMaxAutoSlice = 16384;

std::optional<RowClusterPlan> row_cluster_plan(const device::TopkProblem& pr, int device) {
  const int choice = pr.tuning.row_cluster;
  if (choice == 0 || pr.k < 2) return std::nullopt;  // k = 1: the row-stream argmax
  const RowClusterPlan g = plan_cluster(pr, device);
  if (!prepared(pr, device)) return std::nullopt;
  if (active_clusters(pr, device, g.blocks, g.shared_bytes) == 0) return std::nullopt;
  const bool one_wave =
      pr.rows * g.blocks <= kClusterManyRowsBlocks && (g.slice <= kClusterMaxAutoSlice || long_slices(pr));
  if (choice == 1 || (pr.k > 128 && (pr.rows <= kClusterMaxRows || one_wave))) return g;
  return std::nullopt;
}

void launch_row_cluster(const RowClusterPlan& g, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int device) {
    prepare<T>(device);
    p.k_pad = g.k_pad, p.capacity = g.list;
    p.segments = g.blocks, p.segment_length = g.slice;
    p.index_bits = g.index_bits;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = g.blocks, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    for (std::size_t r0 = 0; r0 < pr.rows; r0 += kMaxChunkRowsCluster) {
      p.row0 = r0;
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(g.blocks, unsigned(std::min(kMaxChunkRowsCluster, pr.rows - r0)));
      config.blockDim = dim3(kClusterThreads);
      config.dynamicSmemBytes = g.shared_bytes;
      config.stream = stream;
      config.attrs = &cluster;
      config.numAttrs = 1;
      RXM_CUDA_CHECK(cudaLaunchKernelEx(&config, row_cluster<T>, p, g.gather));
    }
    if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

}  // namespace radixmesh::detail::topk_gpu
