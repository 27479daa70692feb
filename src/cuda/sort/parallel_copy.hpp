// A memcpy split over a fixed team of host threads (the CPU side of host_staging.cpp's pipe).
// Plain C++, so that the CPU tests check it (tests/unit/test_sort_staging_copy.cpp).
#pragma once
#include <algorithm>
#include <barrier>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

namespace radixmesh::detail {

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
    if (team_ == 1 || bytes < team_threshold) {
      if (bytes) std::memcpy(dst, src, bytes);  // memcpy's pointers must be valid even for 0 bytes
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
    if (last > first) std::memcpy(dst_ + first, src_ + first, last - first);
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
