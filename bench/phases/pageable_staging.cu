// What limits a pageable host array's trip to the GPU and back through pinned staging, on one GPU:
// HostStaging's pipe (src/cuda/sort/host_staging.cpp: a team of host threads copies chunk i + 1
// into a pinned slot while the copy engine moves chunk i) over slot counts, chunk sizes, team sizes
// and store kinds (through the cache, or non-temporal), beside the host copy alone and the pinned
// link rate of the same run. Call DA (one H200, `pageable_staging 8`) swept 2-8 slots of 2-32 MiB
// and independent workers without the team barrier: two 32 MiB slots were the best or level; call
// DC the store kinds (docs/design/sort.md). Outside CMake:
//   nvcc -O2 -std=c++20 -arch=sm_90 -Isrc -Iinclude bench/phases/pageable_staging.cu -o pageable_staging \
//     -Lbuild/src -lradixmesh -lpthread
//   ./pageable_staging [GB moved each way, 8] [host threads, all] [--sort N]
// --sort N: instead, rxm::sort of N pageable u32 keys on one GPU (the automatic plan), 7 timed
// repetitions, the odd ones with their steps (SortOptions::phases); run it against two builds of the library
// (LD_LIBRARY_PATH) to compare their staging in one call.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda/sort/parallel_copy.hpp"
#include "host_timing.hpp"
#include "radixmesh/radixmesh.hpp"

struct Ring {
  char* pinned = nullptr;
  std::vector<cudaEvent_t> done;
  std::vector<bool> busy;
  std::size_t chunk;
  Ring(int slots, std::size_t chunk_bytes) : done(slots), busy(slots, false), chunk(chunk_bytes) {
    CHECK(cudaMallocHost(&pinned, slots * chunk_bytes));
    std::memset(pinned, 0, slots * chunk_bytes);
    for (auto& event : done) CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  }
  ~Ring() {
    for (auto e : done) cudaEventDestroy(e);
    cudaFreeHost(pinned);
  }
  char* slot(int s) const { return pinned + std::size_t(s) * chunk; }
  void wait(int s) {
    if (busy[s]) CHECK(cudaEventSynchronize(done[s]));
    busy[s] = false;
  }
  void mark(int s, cudaStream_t stream) {
    CHECK(cudaEventRecord(done[s], stream));
    busy[s] = true;
  }
};

// HostStaging's upload with `slots` slots: the slot is free once the DMA that last read it ended.
static void team_upload(char* dev, const char* host, std::size_t bytes, Ring& ring, int slots,
                        radixmesh::detail::ParallelCopier& team, cudaStream_t stream,
                        radixmesh::detail::CopyStores stores) {
  for (std::size_t off = 0, c = 0; off < bytes; off += ring.chunk, ++c) {
    const std::size_t n = std::min(ring.chunk, bytes - off);
    const int s = int(c % slots);
    ring.wait(s);
    team.copy(ring.slot(s), host + off, n, stores);
    CHECK(cudaMemcpyAsync(dev + off, ring.slot(s), n, cudaMemcpyHostToDevice, stream));
    ring.mark(s, stream);
  }
  CHECK(cudaStreamSynchronize(stream));
}

// HostStaging's download with `slots` slots: slots - 1 DMAs stay queued ahead of the host copy.
static void team_download(char* host, const char* dev, std::size_t bytes, Ring& ring, int slots,
                          radixmesh::detail::ParallelCopier& team, cudaStream_t stream,
                          radixmesh::detail::CopyStores stores) {
  const std::size_t chunks = (bytes + ring.chunk - 1) / ring.chunk;
  auto queue = [&](std::size_t c) {
    const std::size_t off = c * ring.chunk, n = std::min(ring.chunk, bytes - off);
    CHECK(cudaMemcpyAsync(ring.slot(int(c % slots)), dev + off, n, cudaMemcpyDeviceToHost, stream));
    ring.mark(int(c % slots), stream);
  };
  for (std::size_t c = 0; c + 1 < std::size_t(slots) && c < chunks; ++c) queue(c);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (c + slots - 1 < chunks) queue(c + slots - 1);
    const int s = int(c % slots);
    ring.wait(s);
    const std::size_t off = c * ring.chunk;
    team.copy(host + off, ring.slot(s), std::min(ring.chunk, bytes - off), stores);
  }
}

// rxm::sort of n pageable u32 keys from a fixed pseudo-random input, with its steps.
static int time_sort(std::size_t n, unsigned threads) {
  namespace rxm = radixmesh;
  std::vector<std::uint32_t> pristine(n), keys(n);
  on_threads(threads, n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) pristine[i] = std::uint32_t((i * 0x9E3779B97F4A7C15ull) >> 32) ^ std::uint32_t(i * 2654435761u);
  });
  std::uint64_t want = 0;
  for (std::uint32_t k : pristine) want += k;
  auto ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  std::vector<double> total;
  for (int rep = 0; rep < 8; ++rep) {
    on_threads(threads, n * 4, [&](std::size_t b, std::size_t e) {
      std::memcpy(reinterpret_cast<char*>(keys.data()) + b, reinterpret_cast<const char*>(pristine.data()) + b, e - b);
    });
    rxm::SortPhases steps;
    rxm::SortOptions options;
    options.phases = (rep % 2) ? &steps : nullptr;  // odd repetitions time their steps
    const auto t = Clock::now();
    rxm::sort(ctx, std::span<std::uint32_t>(keys), options);
    const double ms = seconds_since(t) * 1e3;
    std::uint64_t sum = 0;
    bool sorted = true;
    for (std::size_t i = 0; i < n; ++i) sum += keys[i], sorted &= i == 0 || keys[i - 1] <= keys[i];
    if (!sorted || sum != want) {
      std::printf("WRONG RESULT (sorted %d, sum %s)\n", int(sorted), sum == want ? "equal" : "differs");
      return 1;
    }
    if (rep == 0) continue;  // warm-up
    if (options.phases)
      std::printf("sort %zu u32 keys: %.1f ms with steps: setup %.1f, upload %.1f, split %.1f, sorts %.1f, download "
                  "after them %.1f\n",
                  n, ms, steps.setup_ms, steps.upload_ms, steps.partition_ms, steps.local_sort_ms, steps.download_ms);
    else
      total.push_back(ms), std::printf("sort %zu u32 keys: %.1f ms\n", n, ms);
  }
  std::sort(total.begin(), total.end());
  std::printf("median of %zu untimed-step repetitions: %.1f ms\n", total.size(), total[total.size() / 2]);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 4 && std::string(argv[3]) == "--sort")
    return time_sort(std::size_t(std::atof(argv[4])), unsigned(std::atoi(argv[2])));
  const double gb = argc > 1 ? std::atof(argv[1]) : 8.0;
  const unsigned all = argc > 2 ? unsigned(std::atoi(argv[2])) : std::thread::hardware_concurrency();
  const std::size_t bytes = std::size_t(gb * 1e9) & ~std::size_t(4095);
  std::printf("moving %.2f GB each way, %u host threads\n", bytes / 1e9, all);
  std::fflush(stdout);
  std::system("lscpu | grep -E 'Model name|^CPU\\(s\\)|L3|NUMA node\\(s\\)|Socket'");

  auto* src = static_cast<char*>(std::aligned_alloc(4096, bytes));
  auto* dst = static_cast<char*>(std::aligned_alloc(4096, bytes));
  on_threads(all, bytes, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; i += 4) std::memcpy(src + i, &i, std::min<std::size_t>(4, e - i));
    std::memset(dst + b, 0, e - b);
  });
  char* dev;
  CHECK(cudaMalloc(&dev, bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The link alone: 256 MiB of pinned memory copied again and again.
  {
    const std::size_t piece = std::size_t(256) << 20;
    char* pinned;
    CHECK(cudaMallocHost(&pinned, piece));
    std::memset(pinned, 1, piece);
    for (int up = 1; up >= 0; --up) {
      auto t = Clock::now();
      for (std::size_t off = 0; off + piece <= bytes; off += piece)
        CHECK(up ? cudaMemcpyAsync(dev + off, pinned, piece, cudaMemcpyHostToDevice, stream)
                 : cudaMemcpyAsync(pinned, dev + off, piece, cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
      const double s = seconds_since(t);
      std::printf("pinned link %s: %.1f GB/s\n", up ? "up" : "down", (bytes / piece) * piece / s / 1e9);
    }
    CHECK(cudaFreeHost(pinned));
  }
  // The host copy alone, pageable -> pageable, by the team.
  {
    radixmesh::detail::ParallelCopier team(all);
    for (int rep = 0; rep < 2; ++rep) {
      auto t = Clock::now();
      const std::size_t chunk = std::size_t(32) << 20;
      for (std::size_t off = 0; off < bytes; off += chunk) team.copy(dst + off, src + off, std::min(chunk, bytes - off));
      const double s = seconds_since(t);
      std::printf("host team copy pageable -> pageable, 32 MiB calls: %.1f GB/s\n", bytes / s / 1e9);
    }
  }
  // HostStaging's pipe: every direction and store kind, the median of 5 repetitions (host memory
  // rates wander from one repetition to the next), round trips checked byte for byte.
  using radixmesh::detail::CopyStores;
  std::printf("\n%-8s %6s %6s %7s %10s %9s %9s\n", "pipe", "slots", "MiB", "threads", "stores", "up GB/s",
              "down GB/s");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (unsigned threads : {all, std::max(1u, all / 2)}) {
    radixmesh::detail::ParallelCopier team(threads);
    for (int slots : {2, 4})
      for (std::size_t mib : {16, 32}) {
        if (threads != all && (slots != 2 || mib != 32)) continue;
        Ring ring(slots, mib << 20);
        for (CopyStores stores : {CopyStores::cached, CopyStores::streaming}) {
          std::vector<double> up, down;
          for (int rep = 0; rep < 5; ++rep) {
            auto t = Clock::now();
            team_upload(dev, src, bytes, ring, slots, team, stream, stores);
            up.push_back(bytes / seconds_since(t) / 1e9);
            t = Clock::now();
            team_download(dst, dev, bytes, ring, slots, team, stream, stores);
            down.push_back(bytes / seconds_since(t) / 1e9);
          }
          if (std::memcmp(src, dst, bytes) != 0) std::printf("MISMATCH after the round trip\n");
          std::memset(dst, 0, 4096);
          std::printf("%-8s %6d %6zu %7u %10s %9.1f %9.1f\n", "team", slots, mib, threads,
                      stores == CopyStores::streaming ? "streaming" : "cached", median(up), median(down));
          std::fflush(stdout);
        }
      }
  }
  return 0;
}
