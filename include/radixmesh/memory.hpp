// radixmesh/memory.hpp — RAII device and pinned-host memory.
//
// The only places radixmesh allocates CUDA memory. Allocation failure throws
// Error(out_of_memory) saying how many bytes were asked for and how many are free.
// In a build without CUDA, constructing either throws Error(unsupported).
#pragma once
#include <cstddef>
#include <span>
#include <utility>

#include "radixmesh/export.hpp"

namespace radixmesh {

class RXM_API DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);  // cudaMalloc on `device`; 0 bytes allocates nothing
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept { DeviceBuffer(std::move(o)).swap(*this); return *this; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_); std::swap(bytes_, o.bytes_); std::swap(device_, o.device_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

// Page-locked host memory: the staging area for host<->device copies at full PCIe speed.
class RXM_API PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept { PinnedBuffer(std::move(o)).swap(*this); return *this; }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void swap(PinnedBuffer& o) noexcept { std::swap(ptr_, o.ptr_); std::swap(bytes_, o.bytes_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A typed view over a DeviceBuffer: DeviceArray<std::uint32_t> keys(device, n).
template <class T> class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(int device, std::size_t count) : buffer_(device, count * sizeof(T)), count_(count) {}
  T* data() const { return static_cast<T*>(buffer_.data()); }
  std::size_t size() const { return count_; }
  int device() const { return buffer_.device(); }
  std::span<T> span() const { return {data(), count_}; }

 private:
  DeviceBuffer buffer_;
  std::size_t count_ = 0;
};

}  // namespace radixmesh
