// The C API's operations (include/radixmesh/radixmesh.h): each checks what only C can get wrong
// (NULL arrays, enum values, option sizes), then calls the C++ API's type-erased entry.
#include <type_traits>
#include <vector>

#include "capi/c_api_support.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk.hpp"
#include "radixmesh/topk_shards.hpp"

namespace rc = radixmesh::capi;
namespace rxm = radixmesh;

namespace {

rxm::SortOptions sort_options(const rxm_sort_options* given) {
  const rxm_sort_options o = rc::options_or_defaults(given, rxm_sort_options RXM_SORT_OPTIONS_INIT, "rxm_sort_options");
  rxm::SortOptions s;
  s.order = o.descending ? rxm::Order::descending : rxm::Order::ascending;
  s.begin_bit = o.begin_bit;
  s.end_bit = o.end_bit;
  return s;
}

rxm::TopkOptions topk_options(const rxm_topk_options* given) {
  const rxm_topk_options o = rc::options_or_defaults(given, rxm_topk_options RXM_TOPK_OPTIONS_INIT, "rxm_topk_options");
  return {.largest = o.largest != 0, .sorted = o.sorted != 0, .include_nan = o.include_nan != 0};
}

void require_value_bytes(std::size_t value_bytes, const void* values) {
  rxm::require(value_bytes == 0 || value_bytes == 4 || value_bytes == 8,
               "value_bytes is " + std::to_string(value_bytes), "pass 0 (keys only), 4 or 8");
  rxm::require((value_bytes == 0) == (values == nullptr),
               value_bytes ? "values is NULL with value_bytes " + std::to_string(value_bytes)
                           : std::string("values given with value_bytes 0"),
               "pass values with value_bytes 4 or 8, or NULL and 0 for keys only");
}

// k, the options and the outputs of a top-k request (TopkRequest or ShardTopkRequest).
template <class Request>
void set_topk_outputs(Request& rq, std::size_t k, const rxm_topk_options* options, std::size_t index_bytes,
                      void* out_values, void* out_indices) {
  rxm::require(index_bytes == 4 || index_bytes == 8, "index_bytes is " + std::to_string(index_bytes),
               "pass 4 (int32 indices) or 8 (int64)");
  rq.k = k;
  rq.options = topk_options(options);
  rq.index_bytes = index_bytes;
  rq.out_values = out_values;
  rq.out_indices = out_indices;
}

// The local shard arrays of a *_shards call: `count` entries each (the context's local devices).
template <class P> std::vector<P> local_array(const P* given, int count, const char* name) {
  rxm::require(given != nullptr, std::string(name) + " is NULL",
               "pass one entry per local mesh device (rxm_context_local_count)");
  return std::vector<P>(given, given + count);
}

}  // namespace

extern "C" {

rxm_status rxm_sort(rxm_context* c, rxm_key_type type, void* keys, size_t n, int device, void* values,
                    size_t value_bytes, const rxm_sort_options* options) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    const rxm::KeyType t = rc::key_type_of(type);
    require_value_bytes(value_bytes, values);
    rxm::require(n == 0 || keys != nullptr, "keys is NULL with n = " + std::to_string(n), "pass the keys' storage");
    const rxm::SortOptions o = sort_options(options);
    if (device >= 0)
      rxm::detail::sort_device(ctx, t, keys, n, device, values, values ? n : 0, device, value_bytes, o);
    else
      rxm::detail::sort_host(ctx, t, keys, n, values, value_bytes, o);
  });
}

rxm_status rxm_sort_rows(rxm_context* c, rxm_key_type type, void* keys, size_t n, size_t row_length, void* values,
                         size_t value_bytes, const rxm_sort_options* options) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    const rxm::KeyType t = rc::key_type_of(type);
    require_value_bytes(value_bytes, values);
    rxm::detail::sort_rows_host(ctx, t, keys, n, row_length, values, value_bytes, sort_options(options));
  });
}

rxm_status rxm_sort_shards(rxm_context* c, rxm_key_type type, void* const* shards, const size_t* sizes,
                           const int* devices, void* const* values, size_t value_bytes,
                           const rxm_sort_options* options) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    const int locals = ctx.local_mesh_devices().count;
    rxm::detail::ShardSortArgs a;
    a.type = rc::key_type_of(type);
    require_value_bytes(value_bytes, values);
    a.value_bytes = value_bytes;
    a.device_resident = devices != nullptr;
    a.in.keys = local_array(shards, locals, "shards");
    a.in.sizes = local_array(sizes, locals, "sizes");
    if (devices) a.in.key_devices = local_array(devices, locals, "devices");
    if (values) {
      a.in.values = local_array(values, locals, "values");
      a.in.value_sizes = a.in.sizes;
      a.in.value_devices = a.in.key_devices;
    }
    rxm::detail::sort_shards(ctx, a, sort_options(options));
  });
}

rxm_status rxm_topk(rxm_context* c, rxm_key_type type, const void* values, size_t n, int device, size_t rows,
                    const uint64_t* row_offsets, size_t k, const rxm_topk_options* options, void* out_values,
                    void* out_indices, size_t index_bytes) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    rxm::detail::TopkRequest rq;
    rq.type = rc::key_type_of(type);
    rq.values = values;
    rq.total = n;
    rq.values_device = device;
    if (row_offsets) {
      rq.rows = {rows, 0, row_offsets, false};
    } else {
      rxm::require(rows > 0 && n % rows == 0,
                   std::to_string(rows) + " rows do not divide the " + std::to_string(n) + " values",
                   "pass a row count that divides n (1 for one array), or row_offsets");
      rq.rows = rxm::Rows::uniform(rows, n / rows);
    }
    set_topk_outputs(rq, k, options, index_bytes, out_values, out_indices);
    rxm::detail::topk_host(ctx, rq);
  });
}

rxm_status rxm_sort_rows_device(rxm_context* c, rxm_key_type type, int device, const void* keys_in, void* keys_out,
                                const void* values_in, void* values_out, size_t value_bytes, size_t n,
                                size_t row_length, const rxm_sort_options* options, void* stream) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    rxm::detail::DeviceRowsSort s;
    s.type = rc::key_type_of(type);
    require_value_bytes(value_bytes, values_out);
    rxm::require(values_in == nullptr || values_out != nullptr, "values_in given with values_out NULL",
                 "pass values_out (and value_bytes 4 or 8) to move values with their keys, or NULL for both");
    rxm::require(device >= 0, "device is " + std::to_string(device), "pass the CUDA ordinal the arrays live on");
    s.device = device;
    s.keys_in = keys_in;
    s.keys_out = keys_out;
    s.values_in = values_in;
    s.values_out = values_out;
    s.value_bytes = value_bytes;
    s.positions = values_out != nullptr && values_in == nullptr;
    s.n = n;
    s.row_length = row_length;
    s.stream = stream;
    rxm::detail::sort_rows_device(ctx, s, sort_options(options));
  });
}

rxm_status rxm_topk_device(rxm_context* c, rxm_key_type type, int device, const void* values, size_t rows,
                           size_t row_length, size_t row_stride, size_t k, const rxm_topk_options* options,
                           void* out_values, void* out_indices, size_t index_bytes, void* stream) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    rxm::require(device >= 0, "device is " + std::to_string(device), "pass the CUDA ordinal the values live on");
    rxm::detail::DeviceRowsTopk t;
    t.type = rc::key_type_of(type);
    t.device = device;
    t.values = values;
    t.rows = rows;
    t.row_length = row_length;
    t.row_stride = row_stride;
    set_topk_outputs(t, k, options, index_bytes, out_values, out_indices);
    t.stream = stream;
    rxm::detail::topk_rows_device(ctx, t);
  });
}

rxm_status rxm_topk_shards(rxm_context* c, rxm_key_type type, const void* const* shards, const size_t* sizes,
                           const int* devices, size_t rows, int batched, size_t k, const rxm_topk_options* options,
                           void* out_values, void* out_indices, size_t index_bytes) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    const int locals = ctx.local_mesh_devices().count;
    rxm::require(batched || rows == 1, "rows is " + std::to_string(rows) + " for one array (batched 0)",
                 "pass rows = 1, or batched = 1 for rows split by columns");
    rxm::detail::ShardTopkRequest rq;
    rq.type = rc::key_type_of(type);
    rq.values = local_array(shards, locals, "shards");
    rq.sizes = local_array(sizes, locals, "sizes");
    if (devices) rq.devices = local_array(devices, locals, "devices");
    rq.rows = rows;
    rq.batched = batched != 0;
    set_topk_outputs(rq, k, options, index_bytes, out_values, out_indices);
    rxm::detail::topk_shards(ctx, rq);
  });
}

rxm_status rxm_multisplit(rxm_context* c, rxm_key_type type, const void* keys_in, void* keys_out,
                          const void* values_in, void* values_out, size_t value_bytes, size_t n, int device,
                          const rxm_buckets* buckets, size_t* offsets, size_t offsets_count) {
  return rc::guarded([&] {
    rxm::Context& ctx = rc::context_of(c);
    const rxm_buckets b = rc::options_or_defaults(buckets, rxm_buckets RXM_BUCKETS_INIT, "rxm_buckets");
    require_value_bytes(value_bytes, values_in);
    rxm::require((values_in == nullptr) == (values_out == nullptr), "values_in and values_out: one of them is NULL",
                 "pass both (with value_bytes 4 or 8) or neither");
    rxm::require(offsets != nullptr, "offsets is NULL", "pass m + 1 entries of host memory");
    rxm::detail::MultisplitArgs args;
    args.type = rc::key_type_of(type);
    args.n = n;
    args.keys_in = keys_in;
    args.keys_out = keys_out;
    args.values_in = values_in;
    args.values_out = values_out;
    args.value_bytes = value_bytes;
    args.offsets = offsets;
    args.checked = b.checked != 0;
    (void)device;  // the backend finds device-resident arrays by their pointers
    rxm::require(b.kind >= RXM_BUCKETS_RADIX && b.kind <= RXM_BUCKETS_IDENTITY,
                 "bucket kind " + std::to_string(int(b.kind)) + " is not an rxm_bucket_kind",
                 "pass RXM_BUCKETS_RADIX, RXM_BUCKETS_HASH or RXM_BUCKETS_IDENTITY");
    const std::uint64_t m = b.kind == RXM_BUCKETS_RADIX ? (b.bits >= 0 && b.bits <= 16 ? 1u << b.bits : 0) : b.m;
    rxm::require(offsets_count == m + 1,
                 "offsets_count is " + std::to_string(offsets_count) + " for " + std::to_string(m) + " buckets",
                 "pass m + 1 offsets (2^bits + 1 for radix buckets)");
    args.m = std::uint32_t(m);
    rxm::visit_key_type(args.type, [&](auto tag) {
      using K = decltype(tag);
      if (b.kind == RXM_BUCKETS_RADIX) return rxm::detail::run_multisplit<K>(ctx, args, rxm::buckets::radix_digit{b.shift, b.bits});
      if (b.kind == RXM_BUCKETS_HASH) return rxm::detail::run_multisplit<K>(ctx, args, rxm::buckets::hash{b.m});
      if constexpr (std::is_integral_v<K>) {
        rxm::detail::run_multisplit<K>(ctx, args, rxm::buckets::identity{b.m});
      } else {
        rxm::throw_error(rxm::ErrorCode::invalid_argument,
                         "identity buckets over " + std::string(rxm::name_of(args.type)) + " keys",
                         "use identity buckets with integer keys (radix or hash buckets for floats)");
      }
    });
  });
}

}  // extern "C"
