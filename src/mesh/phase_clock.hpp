// Times the steps of one mesh call when the caller asked for them (ShufflePhases, SortPhases): each
// mark waits for every local device, then reads the host clock and stores the time since the
// previous mark in one field of the caller's struct. With no struct, marks cost nothing.
#pragma once
#include <chrono>

#include "mesh/device_backend.hpp"

namespace radixmesh::mesh {

template <class Phases> class PhaseClock {
 public:
  PhaseClock(Phases* out, DeviceBackend& backend, int locals) : out_(out), backend_(backend), locals_(locals) {
    start_ = std::chrono::steady_clock::now();
  }
  bool on() const { return out_ != nullptr; }
  void mark(double Phases::*field) {
    if (!out_) return;
    for (int i = 0; i < locals_; ++i) backend_.synchronize(i);
    const auto now = std::chrono::steady_clock::now();
    out_->*field += std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
  }

 private:
  Phases* out_;
  DeviceBackend& backend_;
  int locals_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace radixmesh::mesh
