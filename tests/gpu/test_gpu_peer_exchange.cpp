// The one-process GPU transports' all-to-all-v (peer: copy engines; peer-sm: a copy kernel per
// sender; nccl: on distinct GPUs) on logical devices (several participants on one GPU, each
// with its own stream and buffers), and on distinct GPUs where the machine has them: byte-exact
// against a CPU model of the exchange, receive buffers poisoned first (every element written,
// nothing else touched), random counts with zeros and empty participants, element sizes 1, 4, 8
// and 12, and one exchange of more than 2^31 elements. Bad counts and small buffers are refused
// before any byte moves. The placed exchange (all_to_all_placed) against its model
// (tests/common/placed_case.hpp), with few pieces a pair (device copies) and many (the copy kernel).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/placed_case.hpp"
#include "common/random_keys.hpp"
#include "cuda/mesh/push_segments.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;
using rxm::comm::AllToAllV;

namespace {

constexpr unsigned char poison = 0xA5;

// One participant's device buffers, and its stream (the context's, not owned here).
struct Side {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  std::uint64_t send_elems = 0, recv_elems = 0;
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;
  std::vector<unsigned char> host_send;
};

struct Mesh {
  std::vector<Side> sides;
  ~Mesh() {
    for (auto& s : sides) {
      rxm::detail::DeviceGuard guard(s.device);
      if (s.send) cudaFree(s.send);
      if (s.recv) cudaFree(s.recv);
    }
  }
};

// counts[i][j]: elements participant i sends to j, participant i being device i of `ctx`.
void build(Mesh& mesh, const rxm::Context& ctx, const std::vector<std::vector<std::uint64_t>>& counts,
           std::size_t elem, std::uint64_t seed) {
  const std::size_t p = ctx.devices().size();
  mesh.sides.resize(p);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < p; ++i) {
    Side& s = mesh.sides[i];
    s.device = ctx.devices()[i].id;
    s.stream = rxm::detail::cuda_resources(ctx).devices[i].stream;
    rxm::detail::DeviceGuard guard(s.device);
    s.send_counts = counts[i];
    s.send_displs.assign(p, 0);
    s.recv_counts.assign(p, 0);
    s.recv_displs.assign(p, 0);
    for (std::size_t j = 0; j < p; ++j) {
      s.send_displs[j] = s.send_elems;
      s.send_elems += counts[i][j];
    }
    for (std::size_t j = 0; j < p; ++j) {
      s.recv_counts[j] = counts[j][i];
      s.recv_displs[j] = s.recv_elems;
      s.recv_elems += counts[j][i];
    }
    s.host_send.resize(s.send_elems * elem);
    for (auto& b : s.host_send) b = static_cast<unsigned char>(rng());
    RXM_CUDA_CHECK(cudaMalloc(&s.send, s.host_send.size() + 1));
    RXM_CUDA_CHECK(cudaMalloc(&s.recv, s.recv_elems * elem + 1));
    RXM_CUDA_CHECK(cudaMemcpy(s.send, s.host_send.data(), s.host_send.size(), cudaMemcpyHostToDevice));
    RXM_CUDA_CHECK(cudaMemset(s.recv, poison, s.recv_elems * elem + 1));
  }
}

std::vector<AllToAllV> entries(const Mesh& mesh) {
  std::vector<AllToAllV> e;
  for (const auto& s : mesh.sides)
    e.push_back({{s.device, s.stream}, s.send, s.recv, s.recv_elems, s.send_counts, s.send_displs, s.recv_counts,
                 s.recv_displs});
  return e;
}

// The context's communicator, made to use transport t.
rxm::comm::Communicator* transport_of(const rxm::Context& ctx, rxm::comm::Transport t = rxm::comm::Transport::peer) {
  rxm::comm::Communicator& c = rxm::use_transport(ctx, t);
  EXPECT_EQ(c.transport(), t);
  return &c;
}

constexpr rxm::comm::Transport one_gpu_transports[] = {rxm::comm::Transport::peer, rxm::comm::Transport::peer_sm};

// The model: participant j's receive buffer is the concatenation over senders i of i's part for j.
void expect_exchanged(const Mesh& mesh, std::size_t elem) {
  const std::size_t p = mesh.sides.size();
  for (std::size_t j = 0; j < p; ++j) {
    const Side& r = mesh.sides[j];
    rxm::detail::DeviceGuard guard(r.device);
    RXM_CUDA_CHECK(cudaStreamSynchronize(r.stream));
    std::vector<unsigned char> got(r.recv_elems * elem + 1);
    RXM_CUDA_CHECK(cudaMemcpy(got.data(), r.recv, got.size(), cudaMemcpyDeviceToHost));
    std::vector<unsigned char> expected;
    for (std::size_t i = 0; i < p; ++i) {
      const Side& s = mesh.sides[i];
      const auto* from = s.host_send.data() + s.send_displs[j] * elem;
      expected.insert(expected.end(), from, from + s.send_counts[j] * elem);
    }
    expected.push_back(poison);  // the byte past the buffer stays untouched
    ASSERT_EQ(got.size(), expected.size());
    std::size_t first = 0;
    while (first < got.size() && got[first] == expected[first]) ++first;
    ASSERT_EQ(first, got.size()) << "participant " << j << ": first wrong byte at " << first;
  }
}

rxm::Context logical_devices(std::size_t p) { return rxm::Context::local(std::vector<int>(p, 0), rxm::Backend::cuda); }

std::vector<std::vector<std::uint64_t>> random_counts(std::size_t p, std::uint64_t max, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint64_t>> c(p, std::vector<std::uint64_t>(p));
  for (auto& row : c)
    for (auto& x : row) x = rng() % 4 == 0 ? 0 : rng() % (max + 1);
  return c;
}

}  // namespace

// The peer-sm copy kernel alone: segments whose source and destination start at every byte offset
// within 16 bytes (shared or not), of lengths around its word and chunk sizes, all in one launch
// (each segment gets its own blocks); every destination byte written, the bytes between untouched.
TEST(GpuPeerExchange, PushSegmentsAtEveryByteAlignment) {
  RXM_REQUIRE_GPU();
  const std::uint64_t lengths[] = {0, 1, 3, 15, 16, 17, 4095, 65536 * 3 + 5, (1u << 20) + 3};
  std::mt19937_64 rng(rxm::testing::test_seed());
  std::vector<rxm::detail::PushSegment> segments;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> places;  // (source offset, destination offset)
  std::uint64_t src_at = 0, dst_at = 0;
  for (int k = 0; k < int(rxm::detail::max_push_segments); ++k) {
    const std::uint64_t bytes = lengths[std::size_t(k) % std::size(lengths)];
    src_at += 16 + rng() % 16;  // a gap, and any offset within 16 bytes
    dst_at += 16 + rng() % 16;
    places.emplace_back(src_at, dst_at);
    segments.push_back({reinterpret_cast<const void*>(src_at), reinterpret_cast<void*>(dst_at), bytes});
    src_at += bytes;
    dst_at += bytes;
  }
  std::vector<unsigned char> host(src_at);
  for (auto& b : host) b = static_cast<unsigned char>(rng());
  rxm::DeviceArray<unsigned char> src(0, src_at), dst(0, dst_at + 16);
  RXM_CUDA_CHECK(cudaMemcpy(src.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(dst.data(), poison, dst.size()));
  for (auto& s : segments) {
    s.src = src.data() + reinterpret_cast<std::uintptr_t>(s.src);
    s.dst = dst.data() + reinterpret_cast<std::uintptr_t>(s.dst);
  }
  rxm::detail::push_segments(segments, nullptr);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> expected(dst.size(), poison), got(dst.size());
  for (std::size_t k = 0; k < segments.size(); ++k)
    std::memcpy(expected.data() + places[k].second, host.data() + places[k].first, segments[k].bytes);
  RXM_CUDA_CHECK(cudaMemcpy(got.data(), dst.data(), got.size(), cudaMemcpyDeviceToHost));
  std::size_t first = 0;
  while (first < got.size() && got[first] == expected[first]) ++first;
  ASSERT_EQ(first, got.size()) << "first wrong byte at " << first;
}

TEST(GpuPeerExchange, LogicalDevicesRandomCountsEveryElementSize) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE(seed);
  for (auto transport : one_gpu_transports)
  for (std::size_t p : {1u, 2u, 3u, 4u, 7u}) {
    for (std::size_t elem : {1u, 4u, 8u, 12u}) {
      SCOPED_TRACE(::testing::Message() << p << " participants, " << elem << "-byte elements, "
                                        << rxm::comm::name_of(transport));
      auto counts = random_counts(p, 100003, seed + p * 31 + elem);
      if (p > 2) {  // an empty participant: sends and receives nothing
        for (auto& x : counts[1]) x = 0;
        for (auto& row : counts) row[1] = 0;
      }
      auto ctx = logical_devices(p);
      Mesh mesh;
      build(mesh, ctx, counts, elem, seed + elem);
      auto t = transport_of(ctx, transport);
      auto e = entries(mesh);
      t->all_to_all_v(e, elem);
      // Twice on the same transport, the receive buffers poisoned again in between on their own
      // streams: its events and copy streams are reused, and the copies wait for the poisoning.
      for (const auto& s : mesh.sides) {
        rxm::detail::DeviceGuard guard(s.device);
        RXM_CUDA_CHECK(cudaMemsetAsync(s.recv, poison, s.recv_elems * elem + 1, s.stream));
      }
      t->all_to_all_v(e, elem);
      expect_exchanged(mesh, elem);
      if (HasFatalFailure()) return;
    }
  }
}

namespace {

// A placed exchange (tests/common/placed_case.hpp) on the context's devices, receive buffers
// poisoned, compared byte for byte (the byte past each buffer stays poisoned).
void check_placed(const rxm::Context& ctx, rxm::comm::Transport transport, std::size_t elem, std::uint64_t seed,
                  std::uint64_t max_piece, std::size_t max_pieces) {
  const std::size_t p = ctx.devices().size();
  auto sides = rxm::testing::placed_case(int(p), elem, seed, max_piece, max_pieces);
  std::vector<rxm::DeviceArray<std::byte>> send, recv;
  std::vector<rxm::comm::AllToAllPlaced> args;
  for (std::size_t i = 0; i < p; ++i) {
    const int device = ctx.devices()[i].id;
    send.emplace_back(device, sides[i].send.size() + 1);
    recv.emplace_back(device, sides[i].recv_elems * elem + 1);
    rxm::detail::DeviceGuard guard(device);
    RXM_CUDA_CHECK(cudaMemcpy(send.back().data(), sides[i].send.data(), sides[i].send.size(), cudaMemcpyHostToDevice));
    RXM_CUDA_CHECK(cudaMemset(recv.back().data(), poison, recv.back().size()));
  }
  for (std::size_t i = 0; i < p; ++i)
    args.push_back({{ctx.devices()[i].id, rxm::detail::cuda_resources(ctx).devices[i].stream}, send[i].data(),
                    recv[i].data(), sides[i].recv_elems, sides[i].pieces, sides[i].recv_counts});
  auto t = transport_of(ctx, transport);
  ASSERT_TRUE(t->places_pieces());
  t->all_to_all_placed(args, elem);
  for (std::size_t j = 0; j < p; ++j) {
    rxm::detail::DeviceGuard guard(ctx.devices()[j].id);
    RXM_CUDA_CHECK(cudaStreamSynchronize(rxm::detail::cuda_resources(ctx).devices[j].stream));
    std::vector<std::byte> got(recv[j].size());
    RXM_CUDA_CHECK(cudaMemcpy(got.data(), recv[j].data(), got.size(), cudaMemcpyDeviceToHost));
    sides[j].expected.push_back(std::byte{poison});
    ASSERT_EQ(got, sides[j].expected) << "receiver " << j;
  }
}

}  // namespace

TEST(GpuPeerExchange, PlacedPiecesOnLogicalDevices) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE(seed);
  for (auto transport : one_gpu_transports)
    for (std::size_t p : {1u, 2u, 4u})
      for (std::size_t elem : {1u, 4u, 12u})
        for (std::size_t max_pieces : {12u, 400u}) {  // 400: more than 32 pieces a pair, the copy kernel
          SCOPED_TRACE(::testing::Message() << rxm::comm::name_of(transport) << " " << p << " devices, elem " << elem
                                            << ", up to " << max_pieces << " pieces");
          check_placed(logical_devices(p), transport, elem, seed + p * 13 + elem + max_pieces, 20000, max_pieces);
          if (HasFatalFailure()) return;
        }
}

TEST(GpuPeerExchange, DistinctGpusWhereThereAreSeveral) {
  RXM_REQUIRE_GPU();
  int count = 0;
  RXM_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "one GPU: the logical-device tests cover the transport";
  std::vector<int> devices(static_cast<std::size_t>(count));
  std::iota(devices.begin(), devices.end(), 0);
  auto ctx = rxm::Context::local(devices, rxm::Backend::cuda);
  for (auto transport : {rxm::comm::Transport::peer, rxm::comm::Transport::peer_sm, rxm::comm::Transport::nccl})
    for (std::size_t elem : {1u, 4u, 8u, 12u}) {
      SCOPED_TRACE(::testing::Message() << elem << "-byte elements, " << rxm::comm::name_of(transport));
      Mesh mesh;
      build(mesh, ctx, random_counts(devices.size(), 1 << 20, 7 + elem), elem, 11);
      auto t = transport_of(ctx, transport);
      auto e = entries(mesh);
      t->all_to_all_v(e, elem);
      t->all_to_all_v(e, elem);  // again on the same transport
      expect_exchanged(mesh, elem);
      if (HasFatalFailure()) return;
    }
  for (auto transport : {rxm::comm::Transport::peer, rxm::comm::Transport::peer_sm}) {
    SCOPED_TRACE(::testing::Message() << "placed, " << rxm::comm::name_of(transport));
    check_placed(ctx, transport, 4, 23, 100000, 400);
    if (HasFatalFailure()) return;
  }
  // The automatic choice is measured once and then kept: a second context of the same GPUs gets
  // the same transport (from the machine cache, without timing again).
  const auto chosen = rxm::use_transport(ctx, rxm::comm::Transport::automatic).transport();
  auto again = rxm::Context::local(devices, rxm::Backend::cuda);
  EXPECT_EQ(rxm::communicator(again).transport(), chosen) << rxm::comm::name_of(chosen);
}

TEST(GpuPeerExchange, NcclRefusesLogicalDevicesClearly) {
  RXM_REQUIRE_GPU();
  auto ctx = logical_devices(2);
  try {
    rxm::use_transport(ctx, rxm::comm::Transport::nccl);
    FAIL() << "nccl over logical devices was accepted";
  } catch (const rxm::Error& err) {
    EXPECT_NE(std::string(err.what()).find("listed more than once"), std::string::npos) << err.what();
  }
  EXPECT_THROW(rxm::use_transport(ctx, rxm::comm::Transport::threads), rxm::Error);
  EXPECT_EQ(rxm::use_transport(ctx, rxm::comm::Transport::automatic).transport(), rxm::comm::Transport::peer);
}

TEST(GpuPeerExchange, MoreThanTwoToThe31Elements) {
  RXM_REQUIRE_GPU();
  std::size_t free_bytes = 0, total = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::uint64_t per_pair = (std::uint64_t(1) << 29) + 7;  // 1-byte elements; 4 pairs: > 2^31 in all
  if (free_bytes < 5 * 4 * per_pair) GTEST_SKIP() << "needs " << 5 * 4 * per_pair << " bytes of device memory";
  std::vector<std::vector<std::uint64_t>> counts(2, std::vector<std::uint64_t>(2, per_pair));
  auto ctx = logical_devices(2);
  Mesh mesh;
  build(mesh, ctx, counts, 1, 3);
  for (auto transport : one_gpu_transports) {
    SCOPED_TRACE(rxm::comm::name_of(transport));
    auto t = transport_of(ctx, transport);
    auto e = entries(mesh);
    t->all_to_all_v(e, 1);
    expect_exchanged(mesh, 1);
    if (HasFatalFailure()) return;
    // cudaMemset runs on the legacy default stream, which the context's streams do not wait for.
    for (const auto& s : mesh.sides) RXM_CUDA_CHECK(cudaMemset(s.recv, poison, s.recv_elems + 1));
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

TEST(GpuPeerExchange, DisagreeingCountsAndSmallBuffersAreRefusedBeforeAnyByteMoves) {
  RXM_REQUIRE_GPU();
  auto counts = random_counts(3, 1000, 5);
  counts[0][2] = 17;
  auto ctx = logical_devices(3);
  Mesh mesh;
  build(mesh, ctx, counts, 4, 9);
  auto t = transport_of(ctx);
  auto e = entries(mesh);
  std::vector<std::uint64_t> wrong = mesh.sides[2].recv_counts;
  wrong[0] += 1;
  e[2].recv_counts = wrong;
  try {
    t->all_to_all_v(e, 4);
    FAIL() << "disagreeing counts were accepted";
  } catch (const rxm::Error& err) {
    EXPECT_NE(std::string(err.what()).find("sends 17 elements to participant 2, which expects 18"),
              std::string::npos)
        << err.what();
  }
  e = entries(mesh);
  e[1].recv_capacity -= 1;
  EXPECT_THROW(t->all_to_all_v(e, 4), rxm::Error);
  // Nothing moved: every receive buffer still holds the poison.
  for (const auto& s : mesh.sides) {
    std::vector<unsigned char> got(s.recv_elems * 4);
    RXM_CUDA_CHECK(cudaMemcpy(got.data(), s.recv, got.size(), cudaMemcpyDeviceToHost));
    for (unsigned char b : got) ASSERT_EQ(b, poison);
  }
  t->fail(1, "participant 1 ran out of memory");
  e = entries(mesh);
  try {
    t->all_to_all_v(e, 4);
    FAIL() << "a failed mesh went on";
  } catch (const rxm::Error& err) {
    EXPECT_NE(std::string(err.what()).find("ran out of memory"), std::string::npos) << err.what();
  }
}
