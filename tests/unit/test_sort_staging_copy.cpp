// The host-side copier of the GPU sort's staging pipe (src/cuda/sort/parallel_copy.hpp): every
// byte copied for any team size, including sizes whose per-thread share is an exact page multiple
// with a remainder (16 777 228 bytes over 16 threads: a share rounded down would lose the last
// 12 bytes), and the same with streaming (non-temporal) stores from and to every alignment.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "common/random_keys.hpp"
#include "cuda/sort/parallel_copy.hpp"

namespace {

using radixmesh::detail::CopyStores;

// Copies `bytes` from src + src_at to dst + dst_at; the bytes around the destination stay untouched.
void check_copies(unsigned team, std::size_t bytes, std::mt19937_64& rng, CopyStores stores = CopyStores::cached,
                  std::size_t src_at = 0, std::size_t dst_at = 0) {
  SCOPED_TRACE("team=" + std::to_string(team) + " bytes=" + std::to_string(bytes) + " src_at=" +
               std::to_string(src_at) + " dst_at=" + std::to_string(dst_at) +
               (stores == CopyStores::streaming ? " streaming" : ""));
  const std::size_t margin = 64;
  std::vector<unsigned char> src(src_at + bytes), dst(dst_at + bytes + margin, 0xA5);
  const std::uint64_t salt = rng();
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>((i * 0x9E3779B97F4A7C15ull + salt) >> 56);
  auto expect_copied = [&](unsigned char around) {
    for (std::size_t i = 0; i < dst_at; ++i) ASSERT_EQ(dst[i], around) << "byte " << i << " before the destination";
    ASSERT_TRUE(std::equal(src.begin() + std::ptrdiff_t(src_at), src.end(), dst.begin() + std::ptrdiff_t(dst_at)));
    for (std::size_t i = dst_at + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], around) << "byte " << i << " after it";
  };
  radixmesh::detail::ParallelCopier copier(team);
  copier.copy(dst.data() + dst_at, src.data() + src_at, bytes, stores);
  expect_copied(0xA5);
  copier.copy(dst.data() + dst_at, src.data() + src_at, 0, stores);  // nothing to do, and the team still works
  std::fill(dst.begin(), dst.end(), 0x5A);
  copier.copy(dst.data() + dst_at, src.data() + src_at, bytes, stores);
  expect_copied(0x5A);
}

}  // namespace

TEST(SortStagingCopy, EveryByteForEveryTeamSize) {
  std::mt19937_64 rng(radixmesh::testing::test_seed());
  const std::size_t threshold = radixmesh::detail::ParallelCopier::team_threshold;
  const std::vector<std::size_t> sizes = {0, 1, 4095, threshold - 1, threshold, threshold + 1, threshold + 12,
                                          16 * 4096 * 64 + 12,   // share = 64 pages exactly, 12 bytes over
                                          std::size_t(16777228),  // 16 shares of whole pages + 12 bytes
                                          std::size_t(33554432)};
  for (unsigned team : {1u, 2u, 3u, 7u, 8u, 16u})
    for (std::size_t bytes : sizes) check_copies(team, bytes, rng);
}

TEST(SortStagingCopy, StreamingStoresCopyEveryByteAtEveryAlignment) {
  std::mt19937_64 rng(radixmesh::testing::test_seed());
  const std::size_t threshold = radixmesh::detail::ParallelCopier::team_threshold;
  for (unsigned team : {1u, 3u, 16u})
    for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(63), std::size_t(64), std::size_t(65),
                              std::size_t(4097), threshold + 12, std::size_t(16777228)})
      for (std::size_t dst_at : {0, 1, 15, 16, 63})
        for (std::size_t src_at : {0, 7}) check_copies(team, bytes, rng, CopyStores::streaming, src_at, dst_at);
}
