// What host memory costs the out-of-core sort, on one GPU: the first touch of a fresh array, a
// copy between pageable arrays by host threads, page-locking an array in place
// (cudaHostRegister) and releasing it, and the copy engines' rates on registered memory, one
// direction and both at once. Outside CMake:
//   nvcc -O2 -std=c++20 -arch=sm_90 bench/phases/host_register.cu -o host_register -lpthread
//   ./host_register [GB of the array, 48] [host threads, all]
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "host_timing.hpp"

int main(int argc, char** argv) {
  const double gb = argc > 1 ? std::atof(argv[1]) : 48.0;
  const unsigned threads = argc > 2 ? unsigned(std::atoi(argv[2])) : std::thread::hardware_concurrency();
  const std::size_t bytes = std::size_t(gb * 1e9) & ~std::size_t(4095);
  const std::size_t piece = std::size_t(8e9);
  std::printf("array %.1f GB, %u host threads\n", bytes / 1e9, threads);

  auto* a = static_cast<char*>(std::aligned_alloc(4096, bytes));
  auto t = std::chrono::steady_clock::now();
  on_threads(threads, bytes, [&](std::size_t b, std::size_t e) { std::memset(a + b, 1, e - b); });
  double s = seconds_since(t);
  std::printf("first touch (memset, fresh pages): %.3f s, %.1f GB/s\n", s, bytes / s / 1e9);
  t = std::chrono::steady_clock::now();
  on_threads(threads, bytes, [&](std::size_t b, std::size_t e) { std::memset(a + b, 2, e - b); });
  s = seconds_since(t);
  std::printf("memset again (pages present): %.3f s, %.1f GB/s\n", s, bytes / s / 1e9);
  t = std::chrono::steady_clock::now();
  on_threads(threads, piece, [&](std::size_t b, std::size_t e) { std::memcpy(a + piece + b, a + b, e - b); });
  s = seconds_since(t);
  std::printf("memcpy 8 GB pageable -> pageable: %.3f s, %.1f GB/s copied\n", s, piece / s / 1e9);

  CHECK(cudaFree(nullptr));
  void *d1, *d2;
  CHECK(cudaMalloc(&d1, piece));
  CHECK(cudaMalloc(&d2, piece));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  t = std::chrono::steady_clock::now();
  CHECK(cudaMemcpy(d1, a, piece / 2, cudaMemcpyHostToDevice));
  s = seconds_since(t);
  std::printf("pageable cudaMemcpy up 4 GB (driver staging): %.3f s, %.1f GB/s\n", s, piece / 2 / s / 1e9);

  for (unsigned flags : {unsigned(cudaHostRegisterDefault), unsigned(cudaHostRegisterPortable)}) {
    t = std::chrono::steady_clock::now();
    CHECK(cudaHostRegister(a, bytes, flags));
    s = seconds_since(t);
    std::printf("cudaHostRegister whole array (flags %u): %.3f s, %.1f GB/s\n", flags, s, bytes / s / 1e9);
    if (flags == cudaHostRegisterDefault) {
      for (int rep = 0; rep < 2; ++rep) {
        t = std::chrono::steady_clock::now();
        CHECK(cudaMemcpyAsync(d1, a, piece, cudaMemcpyHostToDevice, s1));
        CHECK(cudaStreamSynchronize(s1));
        const double up = seconds_since(t);
        t = std::chrono::steady_clock::now();
        CHECK(cudaMemcpyAsync(a + piece, d2, piece, cudaMemcpyDeviceToHost, s2));
        CHECK(cudaStreamSynchronize(s2));
        const double down = seconds_since(t);
        t = std::chrono::steady_clock::now();
        CHECK(cudaMemcpyAsync(d1, a, piece, cudaMemcpyHostToDevice, s1));
        CHECK(cudaMemcpyAsync(a + 2 * piece, d2, piece, cudaMemcpyDeviceToHost, s2));
        CHECK(cudaStreamSynchronize(s1));
        CHECK(cudaStreamSynchronize(s2));
        const double both = seconds_since(t);
        std::printf("registered 8 GB: up %.1f GB/s, down %.1f GB/s, both at once %.1f GB/s each way\n",
                    piece / up / 1e9, piece / down / 1e9, piece / both / 1e9);
      }
      // The copy engines while host threads copy between other parts of the array.
      t = std::chrono::steady_clock::now();
      CHECK(cudaMemcpyAsync(d1, a, piece, cudaMemcpyHostToDevice, s1));
      CHECK(cudaMemcpyAsync(a + piece, d2, piece, cudaMemcpyDeviceToHost, s2));
      on_threads(threads, piece, [&](std::size_t b, std::size_t e) { std::memcpy(a + 3 * piece + b, a + 4 * piece + b, e - b); });
      const double host = seconds_since(t);
      CHECK(cudaStreamSynchronize(s1));
      CHECK(cudaStreamSynchronize(s2));
      std::printf("both directions 8 GB beside a host memcpy of 8 GB: host %.3f s, all %.3f s\n", host,
                  seconds_since(t));
    }
    t = std::chrono::steady_clock::now();
    CHECK(cudaHostUnregister(a));
    s = seconds_since(t);
    std::printf("cudaHostUnregister: %.3f s\n", s);
  }
  // Registering in 1 GB pieces (as a pipeline would, ahead of its transfers).
  t = std::chrono::steady_clock::now();
  const std::size_t gib = std::size_t(1) << 30;
  std::size_t done = 0;
  for (; done + gib <= bytes && done < piece; done += gib) CHECK(cudaHostRegister(a + done, gib, 0));
  s = seconds_since(t);
  std::printf("cudaHostRegister in 1 GiB pieces, %.1f GB: %.1f GB/s\n", done / 1e9, done / s / 1e9);
  for (std::size_t at = 0; at < done; at += gib) CHECK(cudaHostUnregister(a + at));

  // Transparent huge pages.
  auto* h = static_cast<char*>(std::aligned_alloc(std::size_t(2) << 20, piece));
  const int advised = madvise(h, piece, MADV_HUGEPAGE);
  t = std::chrono::steady_clock::now();
  on_threads(threads, piece, [&](std::size_t b, std::size_t e) { std::memset(h + b, 1, e - b); });
  s = seconds_since(t);
  std::printf("huge pages (madvise %d): first touch 8 GB %.1f GB/s", advised, piece / s / 1e9);
  t = std::chrono::steady_clock::now();
  CHECK(cudaHostRegister(h, piece, 0));
  s = seconds_since(t);
  std::printf(", cudaHostRegister %.1f GB/s\n", piece / s / 1e9);
  CHECK(cudaHostUnregister(h));
  std::printf("THP setting: ");
  std::fflush(stdout);
  std::system("cat /sys/kernel/mm/transparent_hugepage/enabled");
  return 0;
}
