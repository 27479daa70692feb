// radixmesh/device_span.hpp — a view of elements that live in one GPU's memory.
//
// What host-level entry points take for device-resident input: the pointer, the element count and
// the CUDA ordinal of the device that owns the memory. The device is part of the view so that a
// call can check that the memory belongs to a device of its Context before touching it
// (device_of_pointer in src/cuda/runtime). Like std::span it owns nothing; unlike std::span it is
// never dereferenced on the host.
//
//   rxm::DeviceArray<float> keys(0, n);
//   rxm::sort(ctx, rxm::device_span(keys));                  // from a DeviceArray (memory.hpp)
//   rxm::sort(ctx, rxm::device_span<float>(ptr, n, device)); // from a raw cudaMalloc'd pointer
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

namespace radixmesh {

// Anything that names its device memory by data(), size() and device(): DeviceArray<T>, device_span<T>.
template <class A, class T>
concept device_range = requires(const A& a) {
  { a.data() } -> std::convertible_to<T*>;
  { a.size() } -> std::convertible_to<std::size_t>;
  { a.device() } -> std::convertible_to<int>;
};

template <class T> class device_span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;

  constexpr device_span() noexcept = default;
  constexpr device_span(T* data, std::size_t size, int device) noexcept : data_(data), size_(size), device_(device) {}
  // From a DeviceArray, or a device_span<U> whose elements convert (device_span<T> -> device_span<const T>).
  template <class A>
    requires(device_range<A, T> && !std::is_same_v<std::remove_cvref_t<A>, device_span>)
  constexpr device_span(const A& range) noexcept  // NOLINT(google-explicit-constructor): a view, like std::span
      : data_(range.data()), size_(range.size()), device_(range.device()) {}

  constexpr T* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr int device() const noexcept { return device_; }  // CUDA ordinal; -1 when unset

  // Elements [offset, offset + count) on the same device; the caller keeps them in range.
  constexpr device_span subspan(std::size_t offset, std::size_t count) const noexcept {
    return {data_ + offset, count, device_};
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
};

template <class A>
device_span(const A&) -> device_span<std::remove_pointer_t<decltype(std::declval<const A&>().data())>>;

}  // namespace radixmesh
