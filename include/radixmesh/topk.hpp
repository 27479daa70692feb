// radixmesh/topk.hpp — the k largest (or smallest) values of an array or of each row of a batch,
// with their indices.
//
//   auto r = rxm::topk(ctx, std::span<const float>(scores), 1024);            // r.values, r.indices
//   auto b = rxm::topk_batched(ctx, logits, rxm::Rows::uniform(4096, 32768), 50, {.sorted = true});
//
// Semantics, identical on every backend (the CPU backend is the reference for the GPU one):
// - Order is the total order of keys.hpp (-inf < ... < -0.0 < +0.0 < ... < +inf; integers as usual).
// - NaN: by default a NaN ranks *below every number* for largest-k and smallest-k alike, so it is
//   selected only when a row holds fewer than k non-NaN values (then NaNs fill the last places).
//   With include_nan = true, NaN takes its keys.hpp place, above +inf: largest-k takes NaNs first,
//   smallest-k last.
// - Ties are deterministic: among values equal to the k-th, the lowest indices are taken.
// - Output order: sorted = best first (largest-first for largest-k), equal values by ascending
//   index; unsorted (the default) = ascending input index. Both are deterministic. Unsorted is
//   usually as fast or faster, but not everywhere (GPU batches of 129-256 best a row: ~1.2x
//   sorted's time; docs/design/topk.md).
// - 1 <= k. topk: k <= n (else an error naming both). topk_batched: a row shorter than k gives its
//   whole row, then the row's remaining places hold index -1 and the value whose bits are all 0.
//   With Rows::uniform, k > length is an error as for topk.
// - Indices are positions within the row (0-based), or input_indices[position] when the caller
//   passes its own indices (one per input value; the entry at the row start + position; ties are
//   still broken by position). 32- or 64-bit (Index template).
// - Types: f32, f64, f16, bf16, i16, u16, i32, u32, i64, u64 (8-bit keys are not supported).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "radixmesh/context.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/export.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh {

struct TopkOptions {
  bool largest = true;       // false: the k smallest
  bool sorted = false;       // false: ascending input index; true: best first, ties by index
  bool include_nan = false;  // see above: NaN ranks above +inf instead of below every number
};

// How a batch's values split into rows: `count` rows of `length`, or row r = [offsets[r],
// offsets[r+1]) with offsets.size() == rows + 1, offsets[0] == 0 not required, non-decreasing, and
// within the values. Offsets may live on the host or (device_offsets) on the values' device.
struct Rows {
  std::size_t count = 0;
  std::size_t length = 0;
  const std::uint64_t* offsets = nullptr;  // count + 1 entries when set
  bool offsets_on_device = false;

  static Rows uniform(std::size_t count, std::size_t length) { return {count, length, nullptr, false}; }
  static Rows from_offsets(std::span<const std::uint64_t> offsets) {
    return {offsets.empty() ? 0 : offsets.size() - 1, 0, offsets.data(), false};
  }
  static Rows from_offsets(device_span<const std::uint64_t> offsets) {
    return {offsets.empty() ? 0 : offsets.size() - 1, 0, offsets.data(), true};
  }
};

template <class T, class Index = std::int64_t> struct TopkResult {
  std::size_t rows = 0, k = 0;  // values and indices hold rows * k entries, row after row
  std::vector<T> values;
  std::vector<Index> indices;
};

// A value's rank: larger rank = better. The one definition of the order both backends select by:
// an order-preserving encoding (keys.hpp), complemented for smallest-k, and for largest-k without
// include_nan rotated so that the 2(2^m - 1) NaN codes at the top of the encoding wrap to the bottom.
// As two constants, so that kernels apply it without a branch per value:
// rank = (encode(raw) ^ flip) + shift, and raw = decode((rank - shift) ^ flip).
template <class T> struct TopkRankTransform {
  using U = key_bits_t<T>;
  U flip = 0, shift = 0;
  RXM_HOST_DEVICE explicit TopkRankTransform(const TopkOptions& o) {
    flip = o.largest ? U(0) : U(~U(0));
    if constexpr (key_traits<T>::is_float)
      if (o.largest && !o.include_nan) shift = U(2 * ((U(1) << key_traits<T>::mantissa_bits) - 1));
  }
  RXM_HOST_DEVICE U rank_of_bits(U raw) const { return U((key_traits<T>::encode_bits(raw) ^ flip) + shift); }
  RXM_HOST_DEVICE U raw_of(U rank) const { return key_traits<T>::decode_bits(U(U(rank - shift) ^ flip)); }
};

template <class T> RXM_HOST_DEVICE key_bits_t<T> topk_rank(T x, const TopkOptions& o) {
  return TopkRankTransform<T>(o).rank_of_bits(to_bits(x));
}

namespace detail {
// The type-erased request every entry point below becomes. Pointers are host or device memory as
// the *_on_device flags say; outputs hold rows * k entries.
struct TopkRequest {
  KeyType type = KeyType::f32;
  const void* values = nullptr;
  std::size_t total = 0;  // elements in `values`
  int values_device = -1; // CUDA ordinal owning `values`, -1 for host memory
  Rows rows;
  std::size_t k = 0;
  TopkOptions options;
  std::size_t index_bytes = 8;           // 4 or 8
  const void* input_indices = nullptr;   // host memory, input_indices_count entries of index_bytes
  std::size_t input_indices_count = 0;   // must equal `total` when input_indices is set
  void* out_values = nullptr;            // host memory
  void* out_indices = nullptr;           // host memory
  // The mesh's local steps only (DeviceBackend::topk_local; the public calls leave them as they
  // are): input indices and outputs in the memory of CUDA device N (-1: host memory), and a
  // number added to every output index (a shard's global offset).
  int input_indices_device = -1;
  int outputs_device = -1;
  std::int64_t index_base = 0;
};
RXM_API void topk_host(Context& ctx, const TopkRequest& request);

// The top-k of `rows` rows of row_length values, row_stride apart (0: row_length), on one CUDA
// device of the context, with the outputs (rows * k each) on that device: the C API's
// rxm_topk_device, which the Python package uses on PyTorch and CuPy arrays. Stream-ordered like
// rxm::device::topk (queued on `stream`, a cudaStream_t; null: the legacy default stream), with
// its temporary storage from the context's pool for the device, taken and given back on `stream`.
struct DeviceRowsTopk {
  KeyType type = KeyType::f32;
  int device = 0;
  const void* values = nullptr;
  std::size_t rows = 1, row_length = 0, row_stride = 0, k = 0;
  TopkOptions options;
  std::size_t index_bytes = 8;  // 4 or 8
  void* out_values = nullptr;
  void* out_indices = nullptr;
  void* stream = nullptr;
};
RXM_API void topk_rows_device(Context& ctx, const DeviceRowsTopk& request);

template <class T, class Index>
TopkResult<T, Index> run_topk(Context& ctx, KeyType type, const void* values, std::size_t n, int device, Rows rows,
                              std::size_t k, const TopkOptions& o, std::span<const Index> input_indices) {
  static_assert(std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>,
                "radixmesh::topk: indices are std::int32_t or std::int64_t");
  TopkRequest rq{type, values, n, device, rows, k, o, sizeof(Index),
                 input_indices.empty() ? nullptr : input_indices.data(), input_indices.size(), nullptr, nullptr};
  TopkResult<T, Index> result;
  std::vector<T> out_values;
  std::vector<Index> out_indices;
  // The request is validated before any output is sized (topk_host checks it first, too).
  const std::size_t places = rows.count * k;
  // Only a k the request allows gets storage (uniform rows need k <= length; topk_host names the
  // rest). Results too large for host memory are an out_of_memory error naming the bytes needed
  // and available, not a std::bad_alloc.
  if (k > 0 && places / k == rows.count && (rows.offsets != nullptr || k <= rows.length)) {
    constexpr std::size_t place_bytes = sizeof(T) + sizeof(Index);
    require_host_memory(places <= SIZE_MAX / place_bytes ? places * place_bytes : SIZE_MAX,
                        "topk: the results (" + std::to_string(rows.count) + " rows x k = " + std::to_string(k) + ")");
    out_values.resize(places);
    out_indices.resize(places);
  }
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  topk_host(ctx, rq);
  result.rows = rows.count;
  result.k = k;
  result.values = std::move(out_values);
  result.indices = std::move(out_indices);
  return result;
}
}  // namespace detail

// Top-k of one host-resident array.
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk(Context& ctx, std::span<const T> values, std::size_t k, const TopkOptions& o = {},
                          std::span<const Index> input_indices = {}) {
  return detail::run_topk<T, Index>(ctx, key_type_v<T>, values.data(), values.size(), -1,
                                    Rows::uniform(1, values.size()), k, o,
                                    input_indices);
}
// Top-k of one array in device memory (results come back to the host). Starts after the work queued
// before it on the legacy default stream and on blocking streams, as rxm::sort on a device_span does.
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk(Context& ctx, device_span<const T> values, std::size_t k, const TopkOptions& o = {}) {
  return detail::run_topk<T, Index>(ctx, key_type_v<T>, values.data(), values.size(), values.device(),
                                    Rows::uniform(1, values.size()), k, o, {});
}

// Top-k of every row of a batch (host-resident values).
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk_batched(Context& ctx, std::span<const T> values, Rows rows, std::size_t k,
                                  const TopkOptions& o = {}, std::span<const Index> input_indices = {}) {
  return detail::run_topk<T, Index>(ctx, key_type_v<T>, values.data(), values.size(), -1, rows, k, o,
                                    input_indices);
}
// Top-k of every row of a batch in device memory.
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk_batched(Context& ctx, device_span<const T> values, Rows rows, std::size_t k,
                                  const TopkOptions& o = {}) {
  return detail::run_topk<T, Index>(ctx, key_type_v<T>, values.data(), values.size(), values.device(), rows, k, o,
                                    {});
}

}  // namespace radixmesh
