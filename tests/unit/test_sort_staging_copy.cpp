// The host-side copier of the GPU sort's staging pipe (src/cuda/sort/parallel_copy.hpp): every
// byte copied for any team size, including sizes whose per-thread share is an exact page multiple
// with a remainder (16 777 228 bytes over 16 threads: a share rounded down would lose the last
// 12 bytes).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "common/random_keys.hpp"
#include "cuda/sort/parallel_copy.hpp"

namespace {

void check_copies(unsigned team, std::size_t bytes, std::mt19937_64& rng) {
  SCOPED_TRACE("team=" + std::to_string(team) + " bytes=" + std::to_string(bytes));
  std::vector<unsigned char> src(bytes), dst(bytes, 0xA5);
  const std::uint64_t salt = rng();
  for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 0x9E3779B97F4A7C15ull + salt) >> 56);
  radixmesh::detail::ParallelCopier copier(team);
  copier.copy(dst.data(), src.data(), bytes);
  ASSERT_EQ(src, dst);
  copier.copy(dst.data(), src.data(), 0);  // nothing to do, and the team is still usable afterwards
  std::fill(dst.begin(), dst.end(), 0x5A);
  copier.copy(dst.data(), src.data(), bytes);
  ASSERT_EQ(src, dst);
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
