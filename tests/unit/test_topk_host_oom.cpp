// Top-k's host-level path when the results cannot fit in host memory (issue 4, "not enough
// memory"): asked through the public API on the CPU backend, the call fails with out_of_memory
// naming the bytes needed and available -- not std::bad_alloc, not a misleading argument error --
// before anything is allocated; with caller-provided outputs (the CLI's route), they stay untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "radixmesh/context.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;

namespace {

// Every row empty, so the input is tiny, but k pads each row: rows * k results of 12 bytes each.
const std::vector<std::uint64_t> empty_rows(1025, 0);
constexpr std::size_t huge_k = std::size_t(1) << 40;  // 1024 rows x 2^40 places x 12 bytes: 12 PiB

std::string oom_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected rxm::Error(out_of_memory), got " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected rxm::Error(out_of_memory), the call succeeded";
  return {};
}

void expect_names_needed_and_available(const std::string& message) {
  EXPECT_NE(message.find("topk: the results (1024 rows x k = " + std::to_string(huge_k) + ")"), std::string::npos)
      << message;
  EXPECT_NE(message.find("needs"), std::string::npos) << message;
  EXPECT_NE(message.find("available"), std::string::npos) << message;
  EXPECT_NE(message.find("fix:"), std::string::npos) << message;
}

TEST(TopkHostOutOfMemory, BatchedResultsTooLargeNameNeededAndAvailable) {
  rxm::Context cpu = rxm::Context::cpu(2);
  const std::vector<float> none;
  expect_names_needed_and_available(oom_message([&] {
    rxm::topk_batched(cpu, std::span<const float>(none), rxm::Rows::from_offsets(empty_rows), huge_k);
  }));
  // 32-bit indices and a 64-bit type: the same check, other widths.
  const std::vector<double> none64;
  expect_names_needed_and_available(oom_message([&] {
    rxm::topk_batched<double, std::int32_t>(cpu, std::span<const double>(none64), rxm::Rows::from_offsets(empty_rows),
                                            huge_k);
  }));
}

TEST(TopkHostOutOfMemory, PlacesThatOverflowASizeAreOutOfMemoryToo) {
  rxm::Context cpu = rxm::Context::cpu(2);
  const std::vector<float> none;
  // 1024 rows x 2^53 places: the count fits a size_t, its bytes do not.
  const std::string message = oom_message([&] {
    rxm::topk_batched(cpu, std::span<const float>(none), rxm::Rows::from_offsets(empty_rows), std::size_t(1) << 53);
  });
  EXPECT_NE(message.find("needs"), std::string::npos) << message;
}

TEST(TopkHostOutOfMemory, KAboveNStaysAnArgumentError) {
  // A k the request does not allow is named as such, however large (no memory is asked for).
  rxm::Context cpu = rxm::Context::cpu(2);
  const std::vector<float> v(100, 1.0f);
  try {
    rxm::topk(cpu, std::span<const float>(v), huge_k);
    FAIL() << "expected an error for k > n";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("k = " + std::to_string(huge_k)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("n = 100"), std::string::npos) << e.what();
  }
}

TEST(TopkHostOutOfMemory, CallerOutputsStayUntouchedOnError) {
  // The type-erased request (what `radixmesh topk` calls) with outputs the caller owns: a bad
  // request fails before a single output is written.
  rxm::Context cpu = rxm::Context::cpu(2);
  const std::vector<float> v = {3, 1, 2, 5, 4};
  std::vector<float> out_values(4, -7.0f);
  std::vector<std::int64_t> out_indices(4, -7);
  const std::vector<std::uint64_t> past = {0, 2, 6};  // runs past the 5 values
  rxm::detail::TopkRequest rq;
  rq.type = rxm::KeyType::f32;
  rq.values = v.data();
  rq.total = v.size();
  rq.rows = rxm::Rows::from_offsets(past);
  rq.k = 2;
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  EXPECT_THROW(rxm::detail::topk_host(cpu, rq), rxm::Error);
  EXPECT_EQ(out_values, std::vector<float>(4, -7.0f));
  EXPECT_EQ(out_indices, std::vector<std::int64_t>(4, -7));
}

}  // namespace
