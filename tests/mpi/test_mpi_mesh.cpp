// The MPI transport and the shuffle over MPI ranks: every Communicator operation and the shuffle
// against the same models as the threads tests (each rank checks its own part, bit for bit),
// messages split into many pieces, counts that disagree and receive buffers too small (an error
// on every rank), a rank whose local step throws (the others get an error naming it), and a rank
// that never arrives (the others time out naming it). Run by mpirun (tests/mpi/CMakeLists.txt).
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "comm/mpi_transport.hpp"
#include "common/error_text.hpp"
#include "common/exchange_case.hpp"
#include "common/shuffle_model.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/mpi.hpp"
#include "radixmesh/shuffle.hpp"

namespace rxm = radixmesh;
using rxm::comm::AllToAllV;
using rxm::comm::MpiTransport;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// One seed for every rank: rank 0's, broadcast.
std::uint64_t shared_seed() {
  std::uint64_t seed = std::random_device{}();
  if (const char* pinned = std::getenv("RXM_TEST_SEED")) seed = std::strtoull(pinned, nullptr, 10);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

}  // namespace

TEST(MpiMesh, ContextDescribesTheRanks) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cpu);
  EXPECT_EQ(ctx.mesh_size(), world_size());
  EXPECT_EQ(ctx.mesh_rank(), world_rank());
  EXPECT_EQ(ctx.local_mesh_devices().first, world_rank());
  EXPECT_EQ(ctx.local_mesh_devices().count, 1);
  EXPECT_EQ(ctx.backend(), rxm::Backend::cpu);
  // Without GPUs, asking for GPU ranks is an error on every rank (GPU ranks themselves:
  // tests/mpi/test_mpi_gpu_mesh.cpp, on GPU machines).
  if (rxm::discover_cuda().topology.devices.empty()) {
    EXPECT_THROW(rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda), rxm::Error);
  }
}

TEST(MpiMesh, AllGatherAllReduceBarrier) {
  MpiTransport comm(MPI_COMM_WORLD);
  const int rank = comm.first_local(), size = comm.size();
  for (std::size_t bytes : {0, 1, 3, 16, 1000}) {
    std::vector<std::byte> mine(bytes);
    for (std::size_t b = 0; b < bytes; ++b) mine[b] = std::byte(rank * 31 + int(b));
    std::vector<std::span<const std::byte>> in = {mine};
    std::vector<std::byte> out(bytes * std::size_t(size));
    comm.all_gather(in, out);
    for (int p = 0; p < size; ++p)
      for (std::size_t b = 0; b < bytes; ++b) ASSERT_EQ(out[std::size_t(p) * bytes + b], std::byte(p * 31 + int(b)));
  }
  std::vector<std::uint64_t> mine = {std::uint64_t(rank), 1, std::uint64_t(1) << 40};
  std::vector<std::span<const std::uint64_t>> in = {mine};
  std::vector<std::uint64_t> sum(3);
  comm.all_reduce_sum(in, sum);
  EXPECT_EQ(sum[0], std::uint64_t(size * (size - 1) / 2));
  EXPECT_EQ(sum[1], std::uint64_t(size));
  EXPECT_EQ(sum[2], std::uint64_t(size) << 40);
  comm.barrier();
}

TEST(MpiMesh, AllToAllVRandomCountsEveryElementSize) {
  const std::uint64_t seed = shared_seed();
  for (std::size_t max_message : {std::size_t(1) << 30, std::size_t(7)}) {  // 7 bytes: many pieces per pair
    MpiTransport comm(MPI_COMM_WORLD, max_message);
    for (std::size_t elem = 1; elem <= 16; ++elem) {
      rxm::testing::ExchangeCase c(seed + elem, comm.size(), elem);
      auto side = c.side(comm.first_local());
      std::vector<AllToAllV> args = {side.args()};
      comm.all_to_all_v(args, elem);
      ASSERT_EQ(side.recv, side.expected) << "elem " << elem << " seed " << seed << " piece " << max_message;
    }
  }
}

TEST(MpiMesh, CountsThatDisagreeAreAnErrorOnEveryRank) {
  MpiTransport comm(MPI_COMM_WORLD);
  rxm::testing::ExchangeCase c(99, comm.size(), 4);
  auto side = c.side(comm.first_local());
  if (comm.first_local() == 1) {
    side.recv_counts[0] += 1;  // rank 1 expects one element more from rank 0 than it sends
    side.recv.resize(side.recv.size() + 64);
  }
  const auto before = side.recv;
  std::vector<AllToAllV> args = {side.args()};
  const std::string what = rxm::testing::error_text([&] { comm.all_to_all_v(args, 4); });
  EXPECT_NE(what.find("participant 0 of"), std::string::npos) << what;
  EXPECT_NE(what.find("to participant 1, which expects"), std::string::npos) << what;
  EXPECT_EQ(side.recv, before) << "nothing moves";
  comm.barrier();  // still usable
}

TEST(MpiMesh, ReceiveBufferTooSmallIsAnErrorOnEveryRank) {
  MpiTransport comm(MPI_COMM_WORLD);
  rxm::testing::ExchangeCase c(5, comm.size(), 8, 0);  // no counts: everyone receives nothing...
  auto side = c.side(comm.first_local());
  for (int j = 0; j < comm.size(); ++j)  // ... except one element from every rank to the last
    if (j == comm.size() - 1) side.send_counts[std::size_t(j)] = 1;
  std::vector<std::byte> send(8 * std::size_t(comm.size()) * 2, std::byte{1});
  side.send = send;
  if (comm.first_local() == comm.size() - 1) {
    side.recv_counts.assign(std::size_t(comm.size()), 1);
    for (int i = 0; i < comm.size(); ++i) side.recv_displs[std::size_t(i)] = std::uint64_t(i);
    side.recv.assign(8 * std::size_t(comm.size() - 1), std::byte{0});  // one element short
  }
  std::vector<AllToAllV> args = {side.args()};
  const std::string what = rxm::testing::error_text([&] { comm.all_to_all_v(args, 8); });
  EXPECT_NE(what.find("receive buffer of participant " + std::to_string(comm.size() - 1)), std::string::npos) << what;
  EXPECT_NE(what.find("needed"), std::string::npos) << what;
}

TEST(MpiMesh, ShuffleMatchesTheModelOnEveryRank) {
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint32_t>> shards(static_cast<std::size_t>(size));
  std::vector<std::vector<std::uint64_t>> values(static_cast<std::size_t>(size));
  std::uint64_t next = 0;
  for (auto& s : shards) {
    s.resize(rng() % 3 == 0 ? 0 : rng() % 5000);  // some ranks have nothing
    for (auto& k : s) k = std::uint32_t(rng());
  }
  for (std::size_t d = 0; d < shards.size(); ++d)
    for (std::size_t i = 0; i < shards[d].size(); ++i) values[d].push_back(next++);
  std::vector<std::span<const std::uint32_t>> mine = {shards[std::size_t(rank)]};
  std::vector<std::span<const std::uint64_t>> my_values = {values[std::size_t(rank)]};
  for (std::uint32_t m : {1u, 5u, 65536u})
    for (const std::string kind : {"round-robin", "block", "skewed"}) {
      const auto owner = rxm::testing::owners(kind, m, size);
      const rxm::buckets::hash f{.m = m};
      const auto model = rxm::testing::shuffle_model<std::uint32_t, std::uint64_t>(shards, values, f, owner, size);
      auto got = rxm::shuffle(ctx, mine, my_values, f, std::span<const int>(owner));
      ASSERT_EQ(got.shards.size(), 1u);
      rxm::testing::expect_shard_matches<std::uint32_t, std::uint64_t>(
          got.shards[0], model[std::size_t(rank)], "m " + std::to_string(m) + " " + kind + " seed " + std::to_string(seed));
    }
  const auto owner = rxm::testing::owners("block", 256, size);
  const auto model = rxm::testing::shuffle_model<std::uint32_t, rxm::no_values>(
      shards, {}, rxm::buckets::radix_digit{.shift = 24, .bits = 8}, owner, size);
  auto got = rxm::shuffle(ctx, mine, rxm::buckets::radix_digit{.shift = 24, .bits = 8}, std::span<const int>(owner));
  rxm::testing::expect_shard_matches<std::uint32_t, rxm::no_values>(got.shards[0], model[std::size_t(rank)], "radix");
}

TEST(MpiMesh, ARankWhoseStepThrowsStopsTheOthers) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int rank = ctx.mesh_rank();
  // Rank 1's keys have bucket ids >= m: its local split throws; every other rank must get an
  // error naming it, not hang.
  std::vector<std::uint32_t> keys = {0, 1, 2, rank == 1 ? 77u : 3u};
  std::vector<std::span<const std::uint32_t>> mine = {keys};
  std::vector<int> owner(4, 0);
  const std::string what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, mine, rxm::buckets::identity{.m = 4}, std::span<const int>(owner));
  });
  if (rank == 1) {
    EXPECT_NE(what.find("bucket id 77"), std::string::npos) << what;
  } else {
    EXPECT_NE(what.find("participant 1 of"), std::string::npos) << what;
    EXPECT_NE(what.find("bucket id 77"), std::string::npos) << "quotes rank 1's error: " << what;
  }
  // Everyone stopped at the same step: the mesh is still usable.
  std::vector<std::uint32_t> fine = {0, 1, 2, 3};
  std::vector<std::span<const std::uint32_t>> ok = {fine};
  auto got = rxm::shuffle(ctx, ok, rxm::buckets::identity{.m = 4}, std::span<const int>(owner));
  EXPECT_EQ(got.shards[0].keys.size(), rank == 0 ? std::size_t(4 * ctx.mesh_size()) : 0u);
}

TEST(MpiMesh, ARankThatNeverArrivesIsNamedAfterTheTimeout) {
  MpiTransport comm(MPI_COMM_WORLD);
  comm.set_timeout(std::chrono::milliseconds(1500));
  const auto start = std::chrono::steady_clock::now();
  if (comm.first_local() != 1) {
    const std::string what = rxm::testing::error_text([&] { comm.barrier(); });
    EXPECT_NE(what.find("participant 1 of"), std::string::npos) << what;
    EXPECT_NE(what.find("did not arrive within 1500 ms"), std::string::npos) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    EXPECT_THROW(comm.barrier(), rxm::Error) << "a timed-out communicator stays broken";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (world_rank() != 0) GTEST_FLAG_SET(brief, true);  // rank 0 prints everything, the others their failures
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
