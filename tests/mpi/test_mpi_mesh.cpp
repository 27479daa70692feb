// The MPI transport, the shuffle, the sort and the top-k over MPI ranks (the top-k: each rank's shard
// or column slice, the single-device result on every rank; ranks that disagree fail together) (the sort: each rank's shard of one
// global input, byte for byte the slice of a single-device sort, every adversarial distribution,
// in memory and out of core; ranks that disagree on the order or hold bad shards, or a rank short
// of host memory out of core, get an error on every rank): every Communicator operation and the shuffle
// against the same models as the threads tests (each rank checks its own part, bit for bit),
// messages split into many pieces, counts that disagree and receive buffers too small (an error
// on every rank), a rank whose local step throws (the others get an error naming it), and a rank
// that never arrives (the others time out naming it). Run by mpirun (tests/mpi/CMakeLists.txt).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <random>

#include "comm/mpi_transport.hpp"
#include "common/error_text.hpp"
#include "common/exchange_case.hpp"
#include "common/mesh_sort_cases.hpp"
#include "common/mesh_topk_cases.hpp"
#include "common/random_keys.hpp"
#include "common/topk_inputs.hpp"
#include "common/shuffle_model.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/mpi.hpp"
#include "radixmesh/shuffle.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk_shards.hpp"

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

namespace {

// Every key type the sort cases cover, every adversarial distribution, both orders, keys with their
// global index as values: each rank sorts its uneven shard with `base` (the order set per case) and
// holds byte for byte its slice of the single-device sort. sizes(round) gives each case's global count.
template <class Sizes> void expect_rank_sorts_match(const rxm::SortOptions& base, Sizes&& sizes) {
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  int round = 0;
  for (rxm::KeyType type : {rxm::KeyType::u32, rxm::KeyType::i64, rxm::KeyType::f32, rxm::KeyType::f16,
                            rxm::KeyType::u8})
    for (const auto& c : rxm::testing::mesh_sort_cases()) {
      if (c.gen.special_fraction > 0 && !rxm::is_floating(type)) continue;
      const std::size_t n = sizes(round);
      const auto in = rxm::testing::global_input(type, n, c.gen, seed + std::uint64_t(round));
      const auto counts = rxm::testing::uneven_counts(n, size, std::uint64_t(round));
      std::size_t from = 0;
      for (int r = 0; r < rank; ++r) from += counts[std::size_t(r)];
      const std::size_t mine = counts[std::size_t(rank)], kb = rxm::size_of(type);
      for (bool descending : {false, true}) {
        rxm::SortOptions o = base;
        o.order = descending ? rxm::Order::descending : rxm::Order::ascending;
        const auto want = rxm::testing::expected_sort(in, o);
        std::vector<std::byte> keys(in.keys.begin() + std::ptrdiff_t(from * kb),
                                    in.keys.begin() + std::ptrdiff_t((from + mine) * kb));
        std::vector<std::uint64_t> values(in.index.begin() + std::ptrdiff_t(from),
                                          in.index.begin() + std::ptrdiff_t(from + mine));
        rxm::visit_key_type(type, [&](auto tag) {
          using K = decltype(tag);
          rxm::sort(ctx, std::span<K>(reinterpret_cast<K*>(keys.data()), mine), std::span(values), o);
        });
        const std::string what = std::string(rxm::name_of(type)) + " " + c.name + (descending ? " descending" : "") +
                                 " n " + std::to_string(n) + " seed " + std::to_string(seed + std::uint64_t(round));
        ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), want.keys.data() + from * kb, mine * kb)) << what;
        for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(values[i], want.index[from + i]) << what << " at " << i;
      }
      ++round;
    }
}

}  // namespace

TEST(MpiMesh, SortMatchesOneDeviceOnEveryRank) {
  expect_rank_sorts_match(rxm::SortOptions{}, [](int round) { return 2000 + std::size_t(round) * 37; });
}

// The merge strategy needs every mesh device in one process: across ranks the partition runs.
TEST(MpiMesh, SortAskedToMergeAcrossRanksPartitions) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  std::vector<std::uint32_t> keys(1000 + std::size_t(ctx.mesh_rank()) * 7);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = std::uint32_t((i * 2654435761u) ^ std::uint32_t(ctx.mesh_rank()));
  rxm::SortPhases phases;
  rxm::sort(ctx, std::span(keys), {.mesh_strategy = rxm::MeshSortStrategy::merge, .phases = &phases});
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_FALSE(phases.merged);
  EXPECT_GE(phases.passes, 1);
}

// Out of core across the ranks (src/mesh/sort_ranks_out_of_core.cpp): asked by the last rank
// alone, so the ranks must decide together; sizes from 0 and fewer keys than ranks to primes.
TEST(MpiMesh, SortOutOfCoreMatchesOneDeviceOnEveryRank) {
  rxm::SortOptions o;
  if (world_rank() == world_size() - 1) o.out_of_core = rxm::OutOfCoreMode::always;
  const std::size_t sizes[] = {0, 1, 2, 3, 5, 1009, 65537, 30011};
  expect_rank_sorts_match(o, [&](int round) { return sizes[std::size_t(round) % std::size(sizes)] + std::size_t(round / 8); });
  o.begin_bit = 3;  // a bit range: ties beyond the bits sorted keep their order
  o.end_bit = 7;
  expect_rank_sorts_match(o, [](int round) { return 4001 + std::size_t(round); });
}

TEST(MpiMesh, SortOutOfCoreRankShortOfHostMemoryStopsEveryRank) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int rank = ctx.mesh_rank();
  std::vector<std::uint32_t> keys(1000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = std::uint32_t((i * 2654435761u) ^ std::uint32_t(rank));
  const std::vector<std::uint32_t> before = keys;
  rxm::SortOptions o;
  o.out_of_core = rxm::OutOfCoreMode::always;
  if (rank == 1) o.host_memory_limit = 64;  // its second array needs 4000 bytes
  const std::string what = rxm::testing::error_text([&] { rxm::sort(ctx, std::span(keys), o); });
  EXPECT_NE(what.find("second host array on rank 1"), std::string::npos) << what;
  EXPECT_NE(what.find("host_memory_limit"), std::string::npos) << what;
  if (rank != 1) {
    EXPECT_NE(what.find("participant 1"), std::string::npos) << what;
  }
  EXPECT_EQ(keys, before) << "nothing moved";
  // The ranks still sort together afterwards.
  rxm::sort(ctx, std::span(keys), {.out_of_core = rxm::OutOfCoreMode::always});
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(MpiMesh, SortIntoBalancedShards) {
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  rxm::GenerateOptions zipf;
  zipf.distribution = rxm::Distribution::zipf;
  const std::size_t n = 30011;
  const auto in = rxm::testing::global_input(rxm::KeyType::u64, n, zipf, seed);
  const auto want = rxm::testing::expected_sort(in, {});
  const auto counts = rxm::testing::uneven_counts(n, size, 2);
  std::size_t from = 0;
  for (int r = 0; r < rank; ++r) from += counts[std::size_t(r)];
  const std::size_t mine = counts[std::size_t(rank)];
  const std::vector<std::size_t> local = {mine};
  const std::vector<std::size_t> out_sizes = rxm::balanced_shard_sizes(ctx, local);
  ASSERT_EQ(out_sizes.size(), 1u);
  EXPECT_EQ(out_sizes[0], n / std::size_t(size) + (std::size_t(rank) < n % std::size_t(size) ? 1 : 0));
  const auto* keys = reinterpret_cast<const std::uint64_t*>(in.keys.data()) + from;
  std::vector<std::uint64_t> out(out_sizes[0]), out_values(out_sizes[0]);
  std::vector<std::span<const std::uint64_t>> ki = {{keys, mine}}, vi = {{in.index.data() + from, mine}};
  std::vector<std::span<std::uint64_t>> ko = {out}, vo = {out_values};
  rxm::sort_shards_into(ctx, std::span<const std::span<const std::uint64_t>>(ki),
                        std::span<const std::span<const std::uint64_t>>(vi), std::span<const std::span<std::uint64_t>>(ko),
                        std::span<const std::span<std::uint64_t>>(vo));
  std::size_t out_from = 0;
  for (int r = 0; r < rank; ++r) out_from += n / std::size_t(size) + (std::size_t(r) < n % std::size_t(size) ? 1 : 0);
  const auto* expected = reinterpret_cast<const std::uint64_t*>(want.keys.data()) + out_from;
  ASSERT_TRUE(std::equal(out.begin(), out.end(), expected)) << "seed " << seed;
  ASSERT_TRUE(std::equal(out_values.begin(), out_values.end(), want.index.begin() + std::ptrdiff_t(out_from)));
}

TEST(MpiMesh, SortRanksThatDisagreeOrHoldBadShardsFailTogether) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD);
  const int rank = ctx.mesh_rank();
  std::vector<std::uint32_t> keys = {5, 3, 1, std::uint32_t(rank)};
  std::vector<std::uint32_t> values(rank == 2 ? 3 : 4);
  const std::string order = rxm::testing::error_text([&] {
    rxm::sort(ctx, std::span(keys), {.order = rank == 1 ? rxm::Order::descending : rxm::Order::ascending});
  });
  EXPECT_NE(order.find("disagree on the order"), std::string::npos) << order;
  EXPECT_NE(order.find("mesh device 1 has descending"), std::string::npos) << order;
  std::vector<std::uint32_t> v(4);
  std::vector<std::span<std::uint32_t>> k1 = {keys}, v1 = {rank == 2 ? std::span(values) : std::span(v)};
  const std::string lengths = rxm::testing::error_text([&] {
    rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(k1), std::span<const std::span<std::uint32_t>>(v1));
  });
  EXPECT_NE(lengths.find("mesh device 2 has 4 keys and 3 values"), std::string::npos) << lengths;
  // Nothing was sorted, and the mesh still works.
  EXPECT_EQ(keys, (std::vector<std::uint32_t>{5, 3, 1, std::uint32_t(rank)}));
  rxm::sort(ctx, std::span(keys));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(MpiMesh, TopkMatchesOneDeviceOnEveryRank) {
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cpu);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  for (const auto& input : rxm::testing::topk_inputs(seed)) {
    const std::size_t n = 3001;
    const auto values = rxm::testing::make_topk_input<float>(input, n);  // the same on every rank (one seed)
    const auto widths = rxm::testing::topk_shard_widths(n, size, seed % 7);
    const auto shards = rxm::testing::column_shards(values, 1, widths);
    std::vector<std::span<const float>> mine = {shards[std::size_t(rank)]};
    for (const auto& o : rxm::testing::topk_option_sets(true))
      for (std::size_t k : {std::size_t(1), std::size_t(40), n})
        for (auto path : {rxm::TopkShardPath::candidates, rxm::TopkShardPath::radix_select}) {
          const auto got = rxm::topk(ctx, std::span<const std::span<const float>>(mine), k, o, {path});
          std::string why;
          ASSERT_TRUE(
              rxm::testing::same_topk(got, rxm::testing::expected_topk<float, std::int64_t>(values, 1, k, o), &why))
              << input.name << " k " << k << " " << rxm::testing::options_text(o) << " path " << int(path) << ": "
              << why;
        }
  }
  // Vocabulary-parallel rows: each rank holds its columns of every row.
  const std::size_t rows = 33, columns = 517;
  const auto logits = rxm::testing::random_bit_patterns<rxm::bfloat16_t>(rows * columns, seed);
  const auto slices = rxm::testing::column_shards(logits, rows, rxm::testing::topk_shard_widths(columns, size, 1));
  std::vector<std::span<const rxm::bfloat16_t>> slice = {slices[std::size_t(rank)]};
  for (std::size_t k : {1, 50, 517}) {
    const auto got = rxm::topk_batched<rxm::bfloat16_t, std::int32_t>(
        ctx, std::span<const std::span<const rxm::bfloat16_t>>(slice), rows, k, {.sorted = true});
    std::string why;
    ASSERT_TRUE(rxm::testing::same_topk(
        got, rxm::testing::expected_topk<rxm::bfloat16_t, std::int32_t>(logits, rows, k, {.sorted = true}), &why))
        << "rows k " << k << ": " << why;
  }
}

// topk_into with the result on rank 0 alone (the others pass empty outputs), and topk_distributed
// (each rank keeps its own winners), by both paths.
TEST(MpiMesh, TopkPlacementOnOneRankAndLeftOnEveryRank) {
  const std::uint64_t seed = shared_seed();
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cpu);
  const int size = ctx.mesh_size(), rank = ctx.mesh_rank();
  const std::size_t n = 4001;
  const auto values = rxm::testing::random_bit_patterns<float>(n, seed);
  const auto widths = rxm::testing::topk_shard_widths(n, size, seed % 5);
  const auto shards = rxm::testing::column_shards(values, 1, widths);
  std::vector<std::span<const float>> mine = {shards[std::size_t(rank)]};
  using S = std::span<const std::span<const float>>;
  std::uint64_t lo = 0;
  for (int d = 0; d < rank; ++d) lo += widths[std::size_t(d)];
  for (const auto& o : rxm::testing::topk_option_sets(true))
    for (std::size_t k : {std::size_t(1), std::size_t(333), n})
      for (auto path : {rxm::TopkShardPath::candidates, rxm::TopkShardPath::radix_select}) {
        const std::string what = "k " + std::to_string(k) + " " + rxm::testing::options_text(o) + " path " +
                                 std::to_string(int(path));
        const auto want = rxm::testing::expected_topk<float, std::int64_t>(values, 1, k, o);
        rxm::TopkResult<float, std::int64_t> into{1, k, {}, {}};
        if (rank == 0) {
          into.values.resize(k);
          into.indices.resize(k);
        }
        rxm::topk_into(ctx, S(mine), k, std::span(into.values), std::span(into.indices), o, {path});
        std::string why;
        if (rank == 0) {
          ASSERT_TRUE(rxm::testing::same_topk(into, want, &why)) << what << ": " << why;
        }
        const std::size_t room = std::min(k, widths[std::size_t(rank)]);
        std::vector<float> kept_values(room);
        std::vector<std::int64_t> kept_indices(room);
        std::vector<std::span<float>> out_values = {kept_values};
        std::vector<std::span<std::int64_t>> out_indices = {kept_indices};
        const auto kept = rxm::topk_distributed(ctx, S(mine), k, std::span<const std::span<float>>(out_values),
                                                std::span<const std::span<std::int64_t>>(out_indices), o, {path});
        const auto part = rxm::testing::winners_in(want, lo, lo + widths[std::size_t(rank)]);
        ASSERT_EQ(kept.size(), 1u);
        ASSERT_EQ(kept[0], part.k) << what;
        kept_values.resize(kept[0]);
        kept_indices.resize(kept[0]);
        ASSERT_TRUE(rxm::testing::same_topk(rxm::TopkResult<float, std::int64_t>{1, kept[0], kept_values, kept_indices},
                                            part, &why))
            << what << ": " << why;
      }
}

TEST(MpiMesh, TopkRanksThatDisagreeFailTogether) {
  auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cpu);
  const int rank = ctx.mesh_rank();
  std::vector<float> values(100, 1.0f);
  std::vector<std::span<const float>> mine = {values};
  using S = std::span<const std::span<const float>>;
  const std::string k_differs = rxm::testing::error_text([&] { rxm::topk(ctx, S(mine), rank == 1 ? 7 : 5); });
  EXPECT_NE(k_differs.find("disagree on the k"), std::string::npos) << k_differs;
  const std::string too_big = rxm::testing::error_text([&] { rxm::topk(ctx, S(mine), 100 * std::size_t(ctx.mesh_size()) + 1); });
  EXPECT_NE(too_big.find("is larger than n = " + std::to_string(100 * ctx.mesh_size())), std::string::npos) << too_big;
  const std::string rows = rxm::testing::error_text([&] { rxm::topk_batched(ctx, S(mine), rank == 1 ? 3 : 4, 1); });
  EXPECT_NE(rows.find("not a whole number of 3 rows"), std::string::npos)
      << rows;
  // The ranks still work together afterwards.
  const auto fine = rxm::topk(ctx, S(mine), 3);
  EXPECT_EQ(fine.indices, (std::vector<std::int64_t>{0, 1, 2}));
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
