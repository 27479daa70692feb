// What limits a pageable host array's trip to the GPU and back through pinned staging, on one GPU:
// HostStaging's pipe (src/cuda/sort/host_staging.cpp: a team of host threads copies chunk i + 1
// into a pinned slot while the copy engine moves chunk i) over slot counts, chunk sizes and team
// sizes, against independent workers (each thread its own slots and copies, no team barrier), the
// host copy alone, and the pinned link rate of the same run. Outside CMake:
//   nvcc -O2 -std=c++20 -arch=sm_90 -Isrc bench/phases/pageable_staging.cu -o pageable_staging -lpthread
//   ./pageable_staging [GB moved each way, 8] [host threads, all]
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "cuda/sort/parallel_copy.hpp"

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

template <class F>
static void on_threads(unsigned threads, std::size_t bytes, F f) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([=] { f(bytes * t / threads, bytes * (t + 1) / threads); });
  for (auto& p : pool) p.join();
}

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
                        radixmesh::detail::ParallelCopier& team, cudaStream_t stream) {
  for (std::size_t off = 0, c = 0; off < bytes; off += ring.chunk, ++c) {
    const std::size_t n = std::min(ring.chunk, bytes - off);
    const int s = int(c % slots);
    ring.wait(s);
    team.copy(ring.slot(s), host + off, n);
    CHECK(cudaMemcpyAsync(dev + off, ring.slot(s), n, cudaMemcpyHostToDevice, stream));
    ring.mark(s, stream);
  }
  CHECK(cudaStreamSynchronize(stream));
}

// HostStaging's download with `slots` slots: slots - 1 DMAs stay queued ahead of the host copy.
static void team_download(char* host, const char* dev, std::size_t bytes, Ring& ring, int slots,
                          radixmesh::detail::ParallelCopier& team, cudaStream_t stream) {
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
    team.copy(host + off, ring.slot(s), std::min(ring.chunk, bytes - off));
  }
}

// Independent workers: worker w takes chunks w, w + T, ... with its own two slots and stream.
struct Worker {
  Ring ring;
  cudaStream_t stream;
  explicit Worker(std::size_t chunk) : ring(2, chunk) { CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~Worker() { cudaStreamDestroy(stream); }
};

static void worker_copy(bool up, char* host, char* dev, std::size_t bytes, std::vector<std::unique_ptr<Worker>>& team,
                        std::size_t chunk) {
  std::vector<std::thread> pool;
  const unsigned workers = unsigned(team.size());
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([=, &team] {
      Ring& ring = team[w]->ring;
      cudaStream_t stream = team[w]->stream;
      std::size_t k = 0;
      std::size_t pending_off = 0, pending_n = 0;
      int pending_slot = -1;
      for (std::size_t off = std::size_t(w) * chunk; off < bytes; off += std::size_t(workers) * chunk, ++k) {
        const std::size_t n = std::min(chunk, bytes - off);
        const int s = int(k % 2);
        ring.wait(s);
        if (up) {
          std::memcpy(ring.slot(s), host + off, n);
          CHECK(cudaMemcpyAsync(dev + off, ring.slot(s), n, cudaMemcpyHostToDevice, stream));
          ring.mark(s, stream);
        } else {
          CHECK(cudaMemcpyAsync(ring.slot(s), dev + off, n, cudaMemcpyDeviceToHost, stream));
          ring.mark(s, stream);
          if (pending_slot >= 0) {
            ring.wait(pending_slot);
            std::memcpy(host + pending_off, ring.slot(pending_slot), pending_n);
          }
          pending_off = off, pending_n = n, pending_slot = s;
        }
      }
      if (!up && pending_slot >= 0) {
        ring.wait(pending_slot);
        std::memcpy(host + pending_off, ring.slot(pending_slot), pending_n);
      }
      CHECK(cudaStreamSynchronize(stream));
    });
  for (auto& p : pool) p.join();
}

int main(int argc, char** argv) {
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
  std::printf("\n%-8s %6s %6s %7s %9s %9s\n", "pipe", "slots", "MiB", "threads", "up GB/s", "down GB/s");
  for (unsigned threads : {all, std::max(1u, all / 2)}) {
    radixmesh::detail::ParallelCopier team(threads);
    for (int slots : {2, 4, 8})
      for (std::size_t mib : {2, 4, 8, 32}) {
        if (slots * mib > 256) continue;
        Ring ring(slots, mib << 20);
        double best_up = 0, best_down = 0;
        for (int rep = 0; rep < 2; ++rep) {
          auto t = Clock::now();
          team_upload(dev, src, bytes, ring, slots, team, stream);
          best_up = std::max(best_up, bytes / seconds_since(t) / 1e9);
          t = Clock::now();
          team_download(dst, dev, bytes, ring, slots, team, stream);
          best_down = std::max(best_down, bytes / seconds_since(t) / 1e9);
        }
        if (std::memcmp(src, dst, bytes) != 0) std::printf("MISMATCH after the round trip\n");
        std::memset(dst, 0, 4096);
        std::printf("%-8s %6d %6zu %7u %9.1f %9.1f\n", "team", slots, mib, threads, best_up, best_down);
        std::fflush(stdout);
      }
  }
  for (unsigned workers : {all, std::max(1u, all / 2)})
    for (std::size_t mib : {2, 8}) {
      std::vector<std::unique_ptr<Worker>> team;
      for (unsigned w = 0; w < workers; ++w) team.push_back(std::make_unique<Worker>(mib << 20));
      double best_up = 0, best_down = 0;
      for (int rep = 0; rep < 2; ++rep) {
        auto t = Clock::now();
        worker_copy(true, src, dev, bytes, team, mib << 20);
        best_up = std::max(best_up, bytes / seconds_since(t) / 1e9);
        t = Clock::now();
        worker_copy(false, dst, dev, bytes, team, mib << 20);
        best_down = std::max(best_down, bytes / seconds_since(t) / 1e9);
      }
      if (std::memcmp(src, dst, bytes) != 0) std::printf("MISMATCH after the round trip\n");
      std::memset(dst, 0, 4096);
      std::printf("%-8s %6d %6zu %7u %9.1f %9.1f\n", "workers", 2, mib, workers, best_up, best_down);
      std::fflush(stdout);
    }
  return 0;
}
