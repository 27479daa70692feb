#include <gtest/gtest.h>

#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;

TEST(Context, CpuContextHasThreadsAndNoDevices) {
  auto ctx = rxm::Context::cpu(3);
  EXPECT_EQ(ctx.backend(), rxm::Backend::cpu);
  EXPECT_EQ(ctx.cpu_threads(), 3u);
  EXPECT_TRUE(ctx.devices().empty());
}

TEST(Context, LocalFallsBackOrFindsDevices) {
  auto ctx = rxm::Context::local();
  if (ctx.backend() == rxm::Backend::cpu) {
    EXPECT_FALSE(ctx.cpu_fallback_reason().empty()) << "a fallback must say why";
  } else {
    EXPECT_FALSE(ctx.devices().empty());
    EXPECT_EQ(ctx.topology().peers.size(), ctx.devices().size());
  }
}

TEST(Context, UnknownDeviceIdIsAClearError) {
  try {
    rxm::Context::local({9999}, rxm::Backend::automatic);
    FAIL() << "expected an error";
  } catch (const rxm::Error& e) {
    std::string what = e.what();
    // Without a GPU the message says CUDA is missing; with one it names the bad id.
    EXPECT_TRUE(what.find("9999") != std::string::npos || what.find("CUDA") != std::string::npos) << what;
    EXPECT_NE(what.find("fix:"), std::string::npos) << what;
  }
}

TEST(Context, CpuBackendWithDevicesIsRejected) {
  EXPECT_THROW(rxm::Context::local({0}, rxm::Backend::cpu), rxm::Error);
}

TEST(Context, CudaRequiredWithoutGpuIsAClearError) {
  auto found = rxm::discover_cuda();
  if (!found.topology.devices.empty()) GTEST_SKIP() << "a GPU is visible";
  try {
    rxm::Context::local({}, rxm::Backend::cuda);
    FAIL();
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("--backend cpu"), std::string::npos) << e.what();
  }
}

TEST(HostMemory, RefusesBeforeAllocating) {
  try {
    rxm::require_host_memory(std::size_t(1) << 62, "a test array");
    FAIL();
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("a test array needs"), std::string::npos) << e.what();
  }
}

TEST(DeviceMemory, ZeroBytesAllocatesNothing) {
  rxm::DeviceBuffer b(0, 0);
  EXPECT_EQ(b.data(), nullptr);
}
