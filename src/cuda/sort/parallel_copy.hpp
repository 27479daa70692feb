// A memcpy split over a fixed team of host threads (the CPU side of host_staging.cpp's pipe).
// Plain C++, so that the CPU tests check it (tests/unit/test_sort_staging_copy.cpp).
#pragma once
#include <algorithm>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RXM_STREAMING_COPY_X86 1
#endif

namespace radixmesh::detail {

// memcpy with non-temporal stores where the CPU has AVX2: the destination's lines are written
// without being read first (a plain store reads each line in before writing it), so a copy beside
// the copy engine's DMA moves 3 bytes of host memory traffic per byte instead of 4. The staging
// pipe's pieces (32 MiB chunks over up to 16 threads: 2 MiB a thread) are below glibc memcpy's
// non-temporal threshold (a fraction of the shared cache), so it copies them with plain stores.
// Ends with a store fence: the bytes are in memory, in order with the caller's later stores (the
// barrier that hands the chunk to the copy engine).
#if RXM_STREAMING_COPY_X86
__attribute__((target("avx2"))) inline void streaming_copy_avx2(char* dst, const char* src, std::size_t bytes) {
  const std::size_t head = std::min(bytes, (32 - reinterpret_cast<std::uintptr_t>(dst) % 32) % 32);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  bytes -= head;
  for (; bytes >= 128; bytes -= 128, dst += 128, src += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 64));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 96), d);
  }
  std::memcpy(dst, src, bytes);
  _mm_sfence();
}
#endif

inline void streaming_copy(void* dst, const void* src, std::size_t bytes) {
#if RXM_STREAMING_COPY_X86
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && bytes >= 4096) return streaming_copy_avx2(static_cast<char*>(dst), static_cast<const char*>(src), bytes);
#endif
  if (bytes) std::memcpy(dst, src, bytes);
}

// memcpy split over a fixed team of threads: one host thread copies about 10 GB/s, the copy
// engine about 55 GB/s, so the CPU side needs several to keep the pipe full.
class ParallelCopier {
 public:
  explicit ParallelCopier(unsigned threads)
      : team_(std::max(1u, threads)), start_(std::ptrdiff_t(team_)), done_(std::ptrdiff_t(team_)) {
    for (unsigned t = 1; t < team_; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~ParallelCopier() {
    stop_ = true;
    if (team_ > 1) start_.arrive_and_wait();
    for (auto& w : workers_) w.join();
  }
  // Below this a single memcpy is faster than waking the team.
  static constexpr std::size_t team_threshold = std::size_t(4) << 20;

  void copy(void* dst, const void* src, std::size_t bytes) {
    if (team_ == 1 || bytes < team_threshold) return streaming_copy(dst, src, bytes);
    dst_ = static_cast<char*>(dst);
    src_ = static_cast<const char*>(src);
    bytes_ = bytes;
    start_.arrive_and_wait();
    copy_piece(0);
    done_.arrive_and_wait();
  }

 private:
  void work(unsigned t) {
    for (;;) {
      start_.arrive_and_wait();
      if (stop_) return;
      copy_piece(t);
      done_.arrive_and_wait();
    }
  }
  void copy_piece(unsigned t) {
    const std::size_t page = 4096;
    // Round the share *up* twice (to a whole share, then to a page), so that team_ pieces always
    // cover every byte: rounding bytes_ / team_ down lost the tail whenever that quotient was
    // already a page multiple (16 777 228 bytes over 16 threads lost the last 12 bytes).
    const std::size_t share = (bytes_ + team_ - 1) / team_;
    const std::size_t piece = (share + page - 1) / page * page;
    const std::size_t first = std::min(bytes_, piece * t), last = std::min(bytes_, first + piece);
    if (last > first) streaming_copy(dst_ + first, src_ + first, last - first);
  }

  unsigned team_;
  std::barrier<> start_, done_;
  std::vector<std::thread> workers_;
  bool stop_ = false;  // written before start_ (a barrier orders it for the workers)
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace radixmesh::detail
