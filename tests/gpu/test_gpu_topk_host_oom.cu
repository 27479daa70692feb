// Top-k's host-level path on a CUDA context when the device cannot hold the work (issue 4, "not
// enough device memory"): the request `radixmesh topk` makes (detail::topk_host, outputs owned by
// the caller) asks the device for more than it has; the error is out_of_memory naming the bytes
// asked for and free, and the caller's outputs are untouched. Also the public API, whose host
// results are checked first (they need as much host memory as the device would need).
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;

namespace {

// Address space for outputs that must never be written: reserved, not committed (MAP_NORESERVE),
// so a request larger than the device costs no host memory. Only the pages poisoned are touched.
class ReservedOutput {
 public:
  explicit ReservedOutput(std::size_t bytes) : bytes_(bytes) {
    ptr_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (ptr_ == MAP_FAILED) ptr_ = nullptr;
  }
  ~ReservedOutput() {
    if (ptr_) ::munmap(ptr_, bytes_);
  }
  void* data() const { return ptr_; }
  // The first and last 4 KiB.
  void poison() {
    std::memset(ptr_, 0xA5, 4096);
    std::memset(static_cast<char*>(ptr_) + bytes_ - 4096, 0xA5, 4096);
  }
  bool still_poisoned() const {
    auto all_a5 = [](const unsigned char* p) {
      for (int i = 0; i < 4096; ++i)
        if (p[i] != 0xA5) return false;
      return true;
    };
    return all_a5(static_cast<const unsigned char*>(ptr_)) &&
           all_a5(static_cast<const unsigned char*>(ptr_) + bytes_ - 4096);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

TEST(GpuTopkHostOutOfMemory, DeviceResultsTooLargeNameNeededAndFree) {
  RXM_REQUIRE_GPU();
  rxm::Context gpu = rxm::Context::local({0}, rxm::Backend::cuda);
  const std::size_t device_bytes = gpu.devices().front().total_memory;
  // One empty row padded to k places: the device needs k * (4 + 8) bytes for the results alone.
  const std::size_t k = device_bytes / 4 + 1;
  ReservedOutput out_values(k * sizeof(float)), out_indices(k * sizeof(std::int64_t));
  ASSERT_NE(out_values.data(), nullptr) << "cannot reserve address space for the outputs";
  ASSERT_NE(out_indices.data(), nullptr);
  out_values.poison();
  out_indices.poison();

  const std::vector<std::uint64_t> offsets = {0, 0};
  const float unused = 0;
  rxm::detail::TopkRequest rq;
  rq.type = rxm::KeyType::f32;
  rq.values = &unused;
  rq.total = 0;
  rq.rows = rxm::Rows::from_offsets(offsets);
  rq.k = k;
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  try {
    rxm::detail::topk_host(gpu, rq);
    FAIL() << "expected out of memory for top-" << k << " on a device of " << device_bytes << " bytes";
  } catch (const rxm::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory) << message;
    EXPECT_NE(message.find("could not allocate"), std::string::npos) << message;
    EXPECT_NE(message.find("free"), std::string::npos) << message;
  }
  EXPECT_TRUE(out_values.still_poisoned()) << "the values output was written";
  EXPECT_TRUE(out_indices.still_poisoned()) << "the indices output was written";
}

TEST(GpuTopkHostOutOfMemory, PublicApiChecksTheHostResultsFirst) {
  RXM_REQUIRE_GPU();
  rxm::Context gpu = rxm::Context::local({0}, rxm::Backend::cuda);
  const std::vector<std::uint64_t> offsets(1025, 0);
  const std::vector<float> none;
  try {
    rxm::topk_batched(gpu, std::span<const float>(none), rxm::Rows::from_offsets(offsets), std::size_t(1) << 40);
    FAIL() << "expected out of memory";
  } catch (const rxm::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory) << message;
    EXPECT_NE(message.find("needs"), std::string::npos) << message;
    EXPECT_NE(message.find("available"), std::string::npos) << message;
  }
}

}  // namespace
