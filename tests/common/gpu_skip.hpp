// GPU tests skip cleanly (and are reported as skipped) where no CUDA device is visible.
#pragma once
#include <gtest/gtest.h>

#include "radixmesh/context.hpp"

#define RXM_REQUIRE_GPU()                                                            \
  do {                                                                               \
    auto rxm_found_ = ::radixmesh::discover_cuda();                                  \
    if (rxm_found_.topology.devices.empty()) GTEST_SKIP() << rxm_found_.reason;      \
  } while (0)
