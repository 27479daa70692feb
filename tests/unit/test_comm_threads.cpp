// The threads transport (CPU devices in one process) and the mesh accessors of Context.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

#include "comm/threads_transport.hpp"
#include "common/error_text.hpp"
#include "common/exchange_case.hpp"
#include "common/placed_case.hpp"
#include "common/random_keys.hpp"
#include "core/context_state.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"

namespace rxm = radixmesh;
using rxm::comm::AllToAllV;
using rxm::comm::ThreadsTransport;
using rxm::testing::ExchangeCase;
using rxm::testing::ExchangeSide;

namespace {

void exchange(ThreadsTransport& comm, std::vector<ExchangeSide>& sides, std::size_t elem_bytes) {
  std::vector<AllToAllV> args;
  for (auto& s : sides) args.push_back(s.args());
  comm.all_to_all_v(args, elem_bytes);
}

std::vector<ExchangeSide> sides_of(const ExchangeCase& c, int n) {
  std::vector<ExchangeSide> sides;
  for (int p = 0; p < n; ++p) sides.push_back(c.side(p));
  return sides;
}

}  // namespace

TEST(MeshContext, SingleDeviceContextsAreAMeshOfOne) {
  auto ctx = rxm::Context::cpu(2);
  EXPECT_EQ(ctx.mesh_size(), 1);
  EXPECT_EQ(ctx.mesh_rank(), 0);
  EXPECT_EQ(ctx.local_mesh_devices().first, 0);
  EXPECT_EQ(ctx.local_mesh_devices().count, 1);
  EXPECT_EQ(ctx.mesh_backend(0), rxm::Backend::cpu);
  EXPECT_EQ(rxm::communicator(ctx).size(), 1);
  auto local = rxm::Context::local();
  EXPECT_EQ(local.mesh_size(), 1);
  EXPECT_EQ(local.mesh_backend(0), local.backend());
}

TEST(MeshContext, CpuMeshHasNLocalCpuDevices) {
  auto ctx = rxm::Context::cpu_mesh(5, 3);
  EXPECT_EQ(ctx.mesh_size(), 5);
  EXPECT_EQ(ctx.local_mesh_devices().count, 5);
  EXPECT_EQ(ctx.cpu_threads(), 3u);
  EXPECT_EQ(ctx.mesh_backend(4), rxm::Backend::cpu);
  auto& comm = rxm::communicator(ctx);
  EXPECT_EQ(comm.transport(), rxm::comm::Transport::threads);
  EXPECT_EQ(comm.size(), 5);
  EXPECT_EQ(&comm, &rxm::communicator(ctx)) << "one communicator per context";
  EXPECT_THROW(ctx.mesh_backend(5), rxm::Error);
  EXPECT_THROW(rxm::Context::cpu_mesh(0), rxm::Error);
  EXPECT_GE(rxm::Context::cpu_mesh(64).cpu_threads(), 1u);
}

TEST(Communicator, TransportNames) {
  EXPECT_EQ(rxm::comm::transport_from_name("mpi"), rxm::comm::Transport::mpi);
  EXPECT_STREQ(rxm::comm::name_of(rxm::comm::Transport::threads), "threads");
  const std::string what = rxm::testing::error_text([] { rxm::comm::transport_from_name("carrier-pigeon"); });
  EXPECT_NE(what.find("carrier-pigeon"), std::string::npos) << what;
  EXPECT_NE(what.find("fix:"), std::string::npos) << what;
}

TEST(Communicator, TimeoutFromEnvironment) {
  ::setenv("RXM_COMM_TIMEOUT_S", "2.5", 1);
  EXPECT_EQ(rxm::comm::Communicator::default_timeout(), std::chrono::milliseconds(2500));
  ::setenv("RXM_COMM_TIMEOUT_S", "soon", 1);
  EXPECT_THROW(rxm::comm::Communicator::default_timeout(), rxm::Error);
  ::unsetenv("RXM_COMM_TIMEOUT_S");
  EXPECT_EQ(rxm::comm::Communicator::default_timeout(), std::chrono::minutes(5));
}

TEST(ThreadsTransport, AllGatherOfEveryWidth) {
  for (int n : {1, 2, 3, 7}) {
    ThreadsTransport comm(n, 2);
    for (std::size_t bytes = 0; bytes <= 16; ++bytes) {
      std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(n), std::vector<std::byte>(bytes));
      std::vector<std::span<const std::byte>> spans;
      for (int p = 0; p < n; ++p) {
        for (std::size_t b = 0; b < bytes; ++b) in[std::size_t(p)][b] = std::byte(p * 17 + int(b));
        spans.emplace_back(in[std::size_t(p)]);
      }
      std::vector<std::byte> out(bytes * std::size_t(n));
      comm.all_gather(spans, out);
      for (int p = 0; p < n; ++p)
        for (std::size_t b = 0; b < bytes; ++b) ASSERT_EQ(out[std::size_t(p) * bytes + b], std::byte(p * 17 + int(b)));
    }
  }
}

TEST(ThreadsTransport, AllReduceSumAndBarrier) {
  ThreadsTransport comm(4, 2);
  std::vector<std::vector<std::uint64_t>> in = {{1, 2, 3}, {10, 20, 30}, {0, 0, 0}, {100, 200, 300}};
  std::vector<std::span<const std::uint64_t>> spans(in.begin(), in.end());
  std::vector<std::uint64_t> out(3, 7);
  comm.all_reduce_sum(spans, out);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{111, 222, 333}));
  comm.barrier();
  std::vector<std::uint64_t> short_out(2);
  EXPECT_THROW(comm.all_reduce_sum(spans, short_out), rxm::Error);
}

TEST(ThreadsTransport, WrongNumberOfEntriesIsAnError) {
  ThreadsTransport comm(3, 1);
  std::vector<std::span<const std::byte>> two(2);
  std::vector<std::byte> out;
  const std::string what = rxm::testing::error_text([&] { comm.all_gather(two, out); });
  EXPECT_NE(what.find("local participants"), std::string::npos) << what;
}

TEST(ThreadsTransport, AllToAllVRandomCountsEveryElementSize) {
  const std::uint64_t seed = rxm::testing::test_seed();
  for (int n : {1, 2, 3, 4, 7}) {
    ThreadsTransport comm(n, 2);
    for (std::size_t elem = 1; elem <= 16; ++elem) {
      ExchangeCase c(seed + std::uint64_t(n) * 100 + elem, n, elem);
      auto sides = sides_of(c, n);
      exchange(comm, sides, elem);
      for (int p = 0; p < n; ++p)
        ASSERT_EQ(sides[std::size_t(p)].recv, sides[std::size_t(p)].expected)
            << "n " << n << " elem " << elem << " participant " << p << " seed " << seed;
    }
  }
}

TEST(ThreadsTransport, LargeExchangeRunsOnSeveralThreads) {
  const int n = 4;
  ThreadsTransport comm(n, 4);
  ExchangeCase c(rxm::testing::test_seed(), n, 8, 200'000);  // above the parallel-copy threshold
  auto sides = sides_of(c, n);
  exchange(comm, sides, 8);
  for (int p = 0; p < n; ++p) ASSERT_EQ(sides[std::size_t(p)].recv, sides[std::size_t(p)].expected);
}

TEST(ThreadsTransport, CountsThatDisagreeAreAnErrorAndMoveNothing) {
  const int n = 3;
  ThreadsTransport comm(n, 1);
  ExchangeCase c(42, n, 4);
  auto sides = sides_of(c, n);
  sides[2].recv_counts[1] += 1;  // participant 2 expects one more element from 1 than 1 sends
  sides[2].recv.resize(sides[2].recv.size() + 64);
  sides[2].expected = sides[2].recv;
  auto before = sides;
  const std::string what = rxm::testing::error_text([&] { exchange(comm, sides, 4); });
  EXPECT_NE(what.find("participant 1 of 3 sends"), std::string::npos) << what;
  EXPECT_NE(what.find("participant 2"), std::string::npos) << what;
  for (int p = 0; p < n; ++p) EXPECT_EQ(sides[std::size_t(p)].recv, before[std::size_t(p)].recv);
}

TEST(ThreadsTransport, ReceiveBufferTooSmallIsRefusedBeforeAnyByteMoves) {
  const int n = 3;
  ThreadsTransport comm(n, 1);
  ExchangeCase c(7, n, 8);
  auto sides = sides_of(c, n);
  // The participant with the most to receive gets a buffer one element short.
  int p = 0;
  for (int q = 1; q < n; ++q)
    if (sides[std::size_t(q)].recv.size() > sides[std::size_t(p)].recv.size()) p = q;
  std::uint64_t needed = 0;
  for (int i = 0; i < n; ++i)
    needed = std::max(needed, sides[std::size_t(p)].recv_displs[std::size_t(i)] + c.count(i, p));
  ASSERT_GT(needed, 0u);
  sides[std::size_t(p)].recv.resize((needed - 1) * 8);
  auto before = sides;
  try {
    exchange(comm, sides, 8);
    FAIL() << "expected an error";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory);
    const std::string what = e.what();
    EXPECT_NE(what.find("participant " + std::to_string(p)), std::string::npos) << what;
    EXPECT_NE(what.find("needed"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
  }
  for (int q = 0; q < n; ++q) EXPECT_EQ(sides[std::size_t(q)].recv, before[std::size_t(q)].recv);
}

TEST(ThreadsTransport, MalformedCountSpansAreAnError) {
  ThreadsTransport comm(2, 1);
  ExchangeCase c(3, 2, 4);
  auto sides = sides_of(c, 2);
  sides[1].send_displs.pop_back();
  const std::string what = rxm::testing::error_text([&] { exchange(comm, sides, 4); });
  EXPECT_NE(what.find("participant 1 of 2"), std::string::npos) << what;
  EXPECT_NE(what.find("mesh size 2"), std::string::npos) << what;
}

TEST(ThreadsTransport, FailedParticipantStopsTheNextCollectiveOnly) {
  ThreadsTransport comm(4, 1);
  comm.fail(2, "bad key at index 5");
  const std::string what = rxm::testing::error_text([&] { comm.barrier(); });
  EXPECT_NE(what.find("participant 2 of 4 failed"), std::string::npos) << what;
  EXPECT_NE(what.find("bad key at index 5"), std::string::npos) << what;
  EXPECT_NO_THROW(comm.barrier()) << "the failure is consumed by the step it stopped";
  EXPECT_THROW(comm.fail(4, "not here"), rxm::Error);
}

TEST(ThreadsTransport, AllToAllPlacedPutsEveryPieceInItsPlace) {
  const std::uint64_t seed = rxm::testing::test_seed();
  for (int size : {1, 2, 3, 5})
    for (std::size_t elem : {1u, 4u, 12u})
      for (std::uint64_t max_piece : {50u, 300000u}) {  // the large one copies with several threads
        auto sides = rxm::testing::placed_case(size, elem, seed + std::uint64_t(size) * 7 + elem, max_piece);
        std::vector<std::vector<std::byte>> recv;
        for (auto& s : sides) recv.emplace_back(s.recv_elems * elem + 1, std::byte{0xEE});
        std::vector<rxm::comm::AllToAllPlaced> args;
        for (std::size_t i = 0; i < sides.size(); ++i)
          args.push_back({{}, sides[i].send.data(), recv[i].data(), sides[i].recv_elems, sides[i].pieces,
                          sides[i].recv_counts});
        ThreadsTransport t(size, 2);
        ASSERT_TRUE(t.places_pieces());
        t.all_to_all_placed(args, elem);
        for (std::size_t j = 0; j < sides.size(); ++j) {
          sides[j].expected.push_back(std::byte{0xEE});  // the byte past the buffer stays
          ASSERT_EQ(recv[j], sides[j].expected) << "size " << size << " elem " << elem << " receiver " << j
                                                << " seed " << seed;
        }
      }
}

TEST(ThreadsTransport, AllToAllPlacedRefusesBadPiecesBeforeAnyByteMoves) {
  ThreadsTransport t(2, 1);
  std::vector<std::byte> send(16, std::byte{1}), recv0(16, std::byte{0}), recv1(16, std::byte{0});
  std::vector<rxm::comm::PlacedPiece> p0 = {{1, 0, 0, 4}}, p1;
  std::vector<std::uint64_t> r0 = {0, 0}, r1 = {4, 0};
  auto args = [&] {
    return std::vector<rxm::comm::AllToAllPlaced>{{{}, send.data(), recv0.data(), 16, p0, r0},
                                                  {{}, send.data(), recv1.data(), 4, p1, r1}};
  };
  t.all_to_all_placed(args(), 1);  // fine
  r1 = {3, 0};
  EXPECT_NE(rxm::testing::error_text([&] { t.all_to_all_placed(args(), 1); }).find("which expects 3"),
            std::string::npos);
  r1 = {6, 0};
  p0 = {{1, 0, 0, 4}, {1, 4, 2, 2}};  // overlaps the first piece's place
  EXPECT_NE(rxm::testing::error_text([&] { t.all_to_all_placed(args(), 1); }).find("overlap"), std::string::npos);
  p0 = {{1, 0, 0, 4}, {1, 4, 4, 2}};  // past a receive buffer of 4 elements
  EXPECT_NE(rxm::testing::error_text([&] { t.all_to_all_placed(args(), 1); }).find("needs 6"), std::string::npos);
  p0 = {{2, 0, 0, 4}};
  EXPECT_NE(rxm::testing::error_text([&] { t.all_to_all_placed(args(), 1); }).find("participant 2"), std::string::npos);
}
