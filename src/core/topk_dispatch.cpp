// Top-k's one entry point: validate, then run on the context's backend.
#include <string>

#include "core/topk_plan.hpp"

#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {
std::string str(std::size_t x) { return std::to_string(x); }

bool supported(KeyType t) { return size_of(t) >= 2; }
}  // namespace

TopkPlan validate_topk(const TopkRequest& rq, const std::uint64_t* host_offsets) {
  if (!supported(rq.type))
    throw_error(ErrorCode::unsupported, "topk: key type " + std::string(name_of(rq.type)) + " is not supported",
                "use a 16-, 32- or 64-bit type (f16, bf16, f32, f64, i16, u16, i32, u32, i64, u64)");
  TopkPlan plan;
  plan.type = rq.type;
  plan.total = rq.total;
  plan.rows = rq.rows.count;
  plan.k = rq.k;
  plan.options = rq.options;
  plan.index_bytes = rq.index_bytes;
  require(rq.index_bytes == 4 || rq.index_bytes == 8, "topk: indices are " + str(rq.index_bytes) + " bytes wide",
          "use std::int32_t or std::int64_t indices");
  require(rq.rows.count > 0, "topk: the batch has no rows", "pass at least one row");
  require(rq.total > 0 || (rq.rows.offsets != nullptr), "topk: the input is empty",
          "pass at least one value (top-k of nothing is undefined)");
  require(rq.k > 0, "topk: k = 0 (n = " + str(rq.total) + ")", "ask for 1 <= k <= n");
  require(rq.total == 0 || rq.values != nullptr, "topk: values is null", "pass the values' storage");
  if (rq.rows.offsets == nullptr) {
    require(rq.rows.length > 0, "topk: rows of length 0", "pass rows of at least one value, or use row offsets");
    require(rq.rows.count <= rq.total / rq.rows.length && rq.rows.count * rq.rows.length == rq.total,
            "topk: " + str(rq.rows.count) + " rows of " + str(rq.rows.length) + " values do not cover the " +
                str(rq.total) + " values given",
            "pass rows * length == the number of values");
    require(rq.k <= rq.rows.length,
            "topk: k = " + str(rq.k) + " is larger than n = " + str(rq.rows.length) + " (the row length)",
            "ask for k <= n, or use row offsets to let short rows be padded");
    plan.uniform_length = rq.rows.length;
    plan.max_row_length = rq.rows.length;
  } else {
    plan.offsets.assign(host_offsets, host_offsets + rq.rows.count + 1);
    for (std::size_t r = 0; r < plan.rows; ++r) {
      require(plan.offsets[r] <= plan.offsets[r + 1],
              "topk: row offsets decrease at row " + str(r) + " (" + str(plan.offsets[r]) + " > " +
                  str(plan.offsets[r + 1]) + ")",
              "pass non-decreasing offsets, one more than the rows");
      plan.max_row_length = std::max<std::size_t>(plan.max_row_length, plan.offsets[r + 1] - plan.offsets[r]);
    }
    require(plan.offsets.back() <= rq.total,
            "topk: row offsets run to " + str(plan.offsets.back()) + " past the " + str(rq.total) + " values given",
            "pass offsets within the values");
  }
  require(rq.index_bytes == 8 || plan.max_row_length <= std::size_t(INT32_MAX),
          "topk: a row of " + str(plan.max_row_length) + " values does not fit 32-bit indices",
          "use std::int64_t indices");
  require(rq.input_indices == nullptr || rq.input_indices_count == rq.total,
          "topk: " + str(rq.input_indices_count) + " input indices for " + str(rq.total) + " values",
          "pass one input index per value");
  require(rq.out_values != nullptr && rq.out_indices != nullptr, "topk: output storage is null",
          "pass output storage of rows * k entries");
  return plan;
}

void topk_host(Context& ctx, const TopkRequest& rq) {
  const std::uint64_t* host_offsets = rq.rows.offsets;
  std::vector<std::uint64_t> copied;
  if (rq.rows.offsets && rq.rows.offsets_on_device) {
    copied = copy_offsets_to_host(rq.rows.offsets, rq.rows.count + 1);
    host_offsets = copied.data();
  }
  TopkPlan plan = validate_topk(rq, host_offsets);
  const bool on_device = rq.values_device >= 0;
  if (ctx.backend() == Backend::cuda || on_device) {
    require(ctx.backend() == Backend::cuda, "topk: the values are in device memory but the context is on the CPU",
            "use a CUDA context (Context::local()) for device-resident input");
    cuda_topk_host(ctx, plan, rq);
  } else {
    cpu_topk(plan, rq.values, rq.input_indices, rq.out_values, rq.out_indices, ctx.cpu_threads());
  }
}

void topk_rows_device(Context& ctx, const DeviceRowsTopk& t) {
  require(ctx.backend() == Backend::cuda, "topk: the values are on CUDA device " + str(t.device) +
                                              " but the context is on the CPU backend",
          "use a CUDA context (Context::local()) for device-resident input");
  cuda_topk_rows_device(ctx, t);
}

}  // namespace radixmesh::detail
