// GPU ranks under MPI: Context::mpi(comm, Backend::cuda) gives every rank its own GPU and the NCCL
// transport (MPI as its control plane). all_to_all_v on device memory against the exchange model
// (every element size, zeros and empty ranks, receive buffers poisoned), the shuffle of
// device-resident shards against the CPU model, counts that disagree (an error on every rank,
// nothing moved), the sort of device shards and of host slices (in memory and out of core) against
// one CPU device's sort, byte for byte (every distribution, keys and values), and a rank whose step throws (the others are told, then the mesh goes on). Needs
// one GPU per rank on each host and a loadable NCCL: every rank skips when any lacks them. Run by
// scripts/gpu-check on GPU machines (`mpirun -np 2|4 test_mpi_gpu_mesh`); CI only builds it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>

#include "common/device_copies.hpp"
#include "common/error_text.hpp"
#include "common/exchange_case.hpp"
#include "common/mesh_sort_cases.hpp"
#include "common/out_of_core_cases.hpp"
#include "common/shuffle_model.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/mpi.hpp"
#include "radixmesh/shuffle.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::comm::AllToAllV;

namespace {

std::uint64_t shared_seed() {
  std::uint64_t seed = std::random_device{}();
  if (const char* pinned = std::getenv("RXM_TEST_SEED")) seed = std::strtoull(pinned, nullptr, 10);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

// Why GPU ranks cannot run here (on any rank), or empty: every rank gets the same answer.
std::string gpu_ranks_missing() {
  std::string why;
  try {
    auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  } catch (const rxm::Error& e) {
    why = e.what();
  }
  int ok = why.empty() ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all ? std::string() : (why.empty() ? std::string("another rank has no GPU or NCCL") : why);
}

#define RXM_REQUIRE_GPU_RANKS()                                   \
  do {                                                            \
    static const std::string missing = gpu_ranks_missing();       \
    if (!missing.empty()) { GTEST_SKIP() << missing; }            \
  } while (0)

// One rank's side of an ExchangeCase in device memory.
struct DeviceSide {
  rxm::testing::ExchangeSide host;
  rxm::DeviceArray<std::byte> send, recv;
  DeviceSide(const rxm::testing::ExchangeCase& c, int rank, int device)
      : host(c.side(rank)), send(device, host.send.size()), recv(device, host.recv.size()) {
    if (!host.send.empty())
      RXM_CUDA_CHECK(cudaMemcpy(send.data(), host.send.data(), host.send.size(), cudaMemcpyHostToDevice));
    if (!host.recv.empty())
      RXM_CUDA_CHECK(cudaMemcpy(recv.data(), host.recv.data(), host.recv.size(), cudaMemcpyHostToDevice));
  }
  AllToAllV args(const rxm::Context& ctx) {
    AllToAllV a = host.args();
    a.where = {ctx.devices()[0].id, rxm::detail::cuda_resources(ctx).devices[0].stream};
    a.send = send.data();
    a.recv = recv.data();
    return a;
  }
  std::vector<std::byte> received(const rxm::Context& ctx) {
    RXM_CUDA_CHECK(cudaStreamSynchronize(rxm::detail::cuda_resources(ctx).devices[0].stream));
    return rxm::testing::to_host(recv.data(), recv.size());
  }
};

}  // namespace

TEST(MpiGpuMesh, EveryRankHasItsGpuAndNccl) {
  RXM_REQUIRE_GPU_RANKS();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(ctx.backend(), rxm::Backend::cuda);
  EXPECT_EQ(ctx.mesh_size(), size);
  EXPECT_EQ(ctx.mesh_rank(), rank);
  EXPECT_EQ(rxm::communicator(ctx).transport(), rxm::comm::Transport::nccl);
  EXPECT_EQ(rxm::use_transport(ctx, rxm::comm::Transport::automatic).transport(), rxm::comm::Transport::nccl);
  EXPECT_THROW(rxm::use_transport(ctx, rxm::comm::Transport::peer), rxm::Error);
  // Each rank on its own GPU.
  int device = ctx.devices()[0].id, lowest = 0, highest = 0;
  MPI_Allreduce(&device, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&device, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (size > 1) {
    EXPECT_LT(lowest, highest);
  }
}

TEST(MpiGpuMesh, AllToAllVOnDeviceMemoryEveryElementSize) {
  RXM_REQUIRE_GPU_RANKS();
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  auto& comm = rxm::communicator(ctx);
  for (std::uint64_t max_count : {40u, 300000u})
    for (std::size_t elem : {1u, 4u, 8u, 12u}) {
      rxm::testing::ExchangeCase c(seed + elem + max_count, comm.size(), elem, max_count);
      DeviceSide side(c, comm.first_local(), ctx.devices()[0].id);
      std::vector<AllToAllV> args = {side.args(ctx)};
      comm.all_to_all_v(args, elem);
      ASSERT_EQ(side.received(ctx), side.host.expected) << "elem " << elem << " max " << max_count << " seed " << seed;
    }
}

TEST(MpiGpuMesh, CountsThatDisagreeAreAnErrorOnEveryRankAndNothingMoves) {
  RXM_REQUIRE_GPU_RANKS();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  auto& comm = rxm::communicator(ctx);
  rxm::testing::ExchangeCase c(99, comm.size(), 4);
  DeviceSide side(c, comm.first_local(), ctx.devices()[0].id);
  if (comm.first_local() == 1 % comm.size()) side.host.recv_counts[0] += 1;
  const auto before = side.host.recv;
  std::vector<AllToAllV> args = {side.args(ctx)};
  const std::string what = rxm::testing::error_text([&] { comm.all_to_all_v(args, 4); });
  if (comm.size() > 1) {
    EXPECT_NE(what.find("which expects"), std::string::npos) << what;
  }
  EXPECT_EQ(side.received(ctx), before) << "nothing moves";
  comm.barrier();  // still usable
}

TEST(MpiGpuMesh, ShuffleOfDeviceShardsMatchesTheModel) {
  RXM_REQUIRE_GPU_RANKS();
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank(), device = ctx.devices()[0].id;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint32_t>> shards(static_cast<std::size_t>(size));
  std::vector<std::vector<std::uint64_t>> values(static_cast<std::size_t>(size));
  std::uint64_t next = 0;
  for (auto& s : shards) {
    s.resize(rng() % 4 == 0 ? 0 : rng() % 300000);  // some ranks have nothing
    for (auto& k : s) k = std::uint32_t(rng());
  }
  for (std::size_t d = 0; d < shards.size(); ++d)
    for (std::size_t i = 0; i < shards[d].size(); ++i) values[d].push_back(next++);
  rxm::DeviceArray<std::uint32_t> keys(device, shards[std::size_t(rank)].size());
  rxm::DeviceArray<std::uint64_t> vals(device, values[std::size_t(rank)].size());
  if (keys.size()) {
    RXM_CUDA_CHECK(cudaMemcpy(keys.data(), shards[std::size_t(rank)].data(), keys.size() * 4, cudaMemcpyHostToDevice));
    RXM_CUDA_CHECK(cudaMemcpy(vals.data(), values[std::size_t(rank)].data(), vals.size() * 8, cudaMemcpyHostToDevice));
  }
  std::vector<rxm::device_span<const std::uint32_t>> mine = {rxm::device_span<const std::uint32_t>(keys)};
  std::vector<rxm::device_span<const std::uint64_t>> my_values = {rxm::device_span<const std::uint64_t>(vals)};
  for (std::uint32_t m : {1u, 7u, 1024u, 65536u})
    for (const std::string kind : {"round-robin", "block", "skewed"}) {
      const auto owner = rxm::testing::owners(kind, m, size);
      const rxm::buckets::hash f{.m = m};
      const auto want = rxm::testing::shuffle_model<std::uint32_t, std::uint64_t>(shards, values, f, owner, size);
      auto got = rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(mine),
                              std::span<const rxm::device_span<const std::uint64_t>>(my_values), f,
                              std::span<const int>(owner));
      ASSERT_EQ(got.shards.size(), 1u);
      const auto& s = got.shards[0];
      const auto& w = want[std::size_t(rank)];
      ASSERT_EQ(s.bucket_offsets, w.offsets) << "m " << m << " " << kind;
      const auto gk = rxm::testing::to_host(s.keys.data(), s.keys.size());
      ASSERT_EQ(gk, w.keys) << "m " << m << " " << kind << " seed " << seed;
      ASSERT_EQ(rxm::testing::to_host(s.values.data(), s.values.size()), w.values) << "stability";
    }
}

TEST(MpiGpuMesh, SortOfDeviceShardsAndHostSlicesMatchesOneDevice) {
  RXM_REQUIRE_GPU_RANKS();
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank(), device = ctx.devices()[0].id;
  int round = 0;
  for (rxm::KeyType type : {rxm::KeyType::u32, rxm::KeyType::f32, rxm::KeyType::i64})
    for (const auto& c : rxm::testing::mesh_sort_cases()) {
      if (c.gen.special_fraction > 0 && !rxm::is_floating(type)) continue;
      const std::size_t n = 1000003 + std::size_t(round) * 101;
      const auto in = rxm::testing::global_input(type, n, c.gen, seed + std::uint64_t(round));
      const auto counts = rxm::testing::uneven_counts(n, size, std::uint64_t(round));
      std::size_t from = 0;
      for (int r = 0; r < rank; ++r) from += counts[std::size_t(r)];
      const std::size_t mine = counts[std::size_t(rank)], kb = rxm::size_of(type);
      rxm::SortOptions o;
      o.order = round % 2 ? rxm::Order::descending : rxm::Order::ascending;
      const auto want = rxm::testing::expected_sort(in, o);
      const std::string what = std::string(rxm::name_of(type)) + " " + c.name + " seed " +
                               std::to_string(seed + std::uint64_t(round));
      // Device shards (sort_shards), with the global index as values.
      rxm::DeviceArray<std::byte> keys(device, mine * kb);
      rxm::DeviceArray<std::uint64_t> vals(device, mine);
      if (mine) {
        RXM_CUDA_CHECK(cudaMemcpy(keys.data(), in.keys.data() + from * kb, mine * kb, cudaMemcpyHostToDevice));
        RXM_CUDA_CHECK(cudaMemcpy(vals.data(), in.index.data() + from, mine * 8, cudaMemcpyHostToDevice));
      }
      rxm::visit_key_type(type, [&](auto tag) {
        using K = decltype(tag);
        std::vector<rxm::device_span<K>> k = {rxm::device_span<K>(reinterpret_cast<K*>(keys.data()), mine, device)};
        std::vector<rxm::device_span<std::uint64_t>> v = {rxm::device_span<std::uint64_t>(vals)};
        rxm::sort_shards(ctx, std::span<const rxm::device_span<K>>(k), std::span<const rxm::device_span<std::uint64_t>>(v), o);
      });
      ASSERT_TRUE(rxm::testing::same_bytes(rxm::testing::to_host(keys.data(), keys.size()).data(), want.keys.data() + from * kb,
                               mine * kb))
          << what;
      const auto got_values = rxm::testing::to_host(vals.data(), vals.size());
      for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(got_values[i], want.index[from + i]) << what << " at " << i;
      // Host slices (rxm::sort on the rank's span: uploaded, sorted together, downloaded).
      std::vector<std::byte> host(in.keys.begin() + std::ptrdiff_t(from * kb), in.keys.begin() + std::ptrdiff_t((from + mine) * kb));
      rxm::visit_key_type(type, [&](auto tag) {
        using K = decltype(tag);
        rxm::sort(ctx, std::span<K>(reinterpret_cast<K*>(host.data()), mine), o);
      });
      ASSERT_TRUE(rxm::testing::same_bytes(host.data(), want.keys.data() + from * kb, mine * kb)) << what << " host";
      ++round;
    }
}

// Host slices larger than a rank's device memory limit: the ranks go out of core together (the
// automatic choice), each in rounds through its own GPU, then splitters, one host exchange and a
// merge; byte for byte one device's sort, keys and values.
TEST(MpiGpuMesh, SortOfHostSlicesOutOfCoreMatchesOneDevice) {
  RXM_REQUIRE_GPU_RANKS();
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  int round = 0;
  for (rxm::KeyType type : {rxm::KeyType::u32, rxm::KeyType::f64, rxm::KeyType::i16})
    for (const auto& c : rxm::testing::mesh_sort_cases()) {
      if (c.gen.special_fraction > 0 && !rxm::is_floating(type)) continue;
      const std::size_t n = 700001 + std::size_t(round) * 101;
      const auto in = rxm::testing::global_input(type, n, c.gen, seed + std::uint64_t(round));
      const auto counts = rxm::testing::uneven_counts(n, size, std::uint64_t(round));
      std::size_t from = 0;
      for (int r = 0; r < rank; ++r) from += counts[std::size_t(r)];
      const std::size_t mine = counts[std::size_t(rank)], kb = rxm::size_of(type);
      rxm::SortOptions o = rxm::testing::out_of_core_options(60000, kb + 8);
      o.order = round % 2 ? rxm::Order::descending : rxm::Order::ascending;
      rxm::SortPhases phases;
      o.phases = &phases;
      const auto want = rxm::testing::expected_sort(in, o);
      std::vector<std::byte> keys(in.keys.begin() + std::ptrdiff_t(from * kb), in.keys.begin() + std::ptrdiff_t((from + mine) * kb));
      std::vector<std::uint64_t> values(in.index.begin() + std::ptrdiff_t(from), in.index.begin() + std::ptrdiff_t(from + mine));
      rxm::visit_key_type(type, [&](auto tag) {
        using K = decltype(tag);
        rxm::sort(ctx, std::span<K>(reinterpret_cast<K*>(keys.data()), mine), std::span(values), o);
      });
      const std::string what = std::string(rxm::name_of(type)) + " " + c.name + " seed " +
                               std::to_string(seed + std::uint64_t(round));
      EXPECT_TRUE(phases.out_of_core) << what;
      ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), want.keys.data() + from * kb, mine * kb)) << what;
      for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(values[i], want.index[from + i]) << what << " at " << i;
      ++round;
    }
}

TEST(MpiGpuMesh, ARankWhoseStepThrowsStopsTheOthers) {
  RXM_REQUIRE_GPU_RANKS();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cuda);
  const int rank = ctx.mesh_rank(), device = ctx.devices()[0].id;
  std::vector<std::uint32_t> host = {0, 1, 2, rank == 1 % ctx.mesh_size() ? 77u : 3u};
  rxm::DeviceArray<std::uint32_t> keys(device, host.size());
  RXM_CUDA_CHECK(cudaMemcpy(keys.data(), host.data(), 16, cudaMemcpyHostToDevice));
  std::vector<rxm::device_span<const std::uint32_t>> mine = {rxm::device_span<const std::uint32_t>(keys)};
  std::vector<int> owner(4, 0);
  const std::string what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(mine), rxm::buckets::identity{.m = 4},
                 std::span<const int>(owner));
  });
  EXPECT_NE(what.find("bucket id 77"), std::string::npos) << "every rank quotes rank 1's error: " << what;
  host[3] = 3;
  RXM_CUDA_CHECK(cudaMemcpy(keys.data(), host.data(), 16, cudaMemcpyHostToDevice));
  auto got = rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(mine),
                          rxm::buckets::identity{.m = 4}, std::span<const int>(owner));
  EXPECT_EQ(got.shards[0].keys.size(), rank == 0 ? std::size_t(4 * ctx.mesh_size()) : 0u);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) GTEST_FLAG_SET(brief, true);
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
