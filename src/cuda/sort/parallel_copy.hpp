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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace radixmesh::detail {

// How a copy writes its destination: through the cache (memcpy), or with non-temporal stores that
// write whole lines without reading them first and leave the cache to the source (x86-64; memcpy
// elsewhere). Streaming suits a destination nobody reads soon, such as the caller's array at the
// end of a download.
enum class CopyStores { cached, streaming };

// memcpy with non-temporal stores for the 64-byte-aligned body of the destination; the ragged ends
// by memcpy. The stores are fenced before it returns, so a barrier after it publishes them.
inline void streaming_copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;  // memcpy's pointers must be valid even for 0 bytes
#if defined(__SSE2__)
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const std::size_t head = std::min(bytes, std::size_t(-reinterpret_cast<std::uintptr_t>(d) & 63));
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  const std::size_t body = bytes & ~std::size_t(63);
  for (std::size_t i = 0; i < body; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  _mm_sfence();
  std::memcpy(d + body, s + body, bytes - body);
#else
  std::memcpy(dst, src, bytes);
#endif
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

  void copy(void* dst, const void* src, std::size_t bytes, CopyStores stores = CopyStores::cached) {
    stores_ = stores;
    if (team_ == 1 || bytes < team_threshold) {
      copy_range(static_cast<char*>(dst), static_cast<const char*>(src), bytes);
      return;
    }
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
    if (last > first) copy_range(dst_ + first, src_ + first, last - first);
  }
  void copy_range(char* dst, const char* src, std::size_t bytes) const {
    if (stores_ == CopyStores::streaming)
      streaming_copy(dst, src, bytes);
    else if (bytes)
      std::memcpy(dst, src, bytes);  // memcpy's pointers must be valid even for 0 bytes
  }

  unsigned team_;
  std::barrier<> start_, done_;
  std::vector<std::thread> workers_;
  bool stop_ = false;  // written before start_ (a barrier orders it for the workers)
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  std::size_t bytes_ = 0;
  CopyStores stores_ = CopyStores::cached;  // written before start_, as stop_
};

}  // namespace radixmesh::detail
