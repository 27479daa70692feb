// The host-level top-k on a CUDA context: stage host input on the context's first device (or use
// device-resident input where it lies), run the device-level top-k on the device's stream, bring
// the results back. Every allocation is RAII; outputs are written only once all went well.
#include <cstdlib>
#include <deque>
#include <cstring>
#include <string>

#include "core/topk_plan.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/topk/topk_on_device.hpp"
#include "cuda/topk/topk_planned.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"

namespace radixmesh::detail {

namespace {
// RXM_TOPK_DEBUG=1 (anything but empty or "0"): TopkProblem::debug_checks for this call.
bool topk_debug_requested() {
  const char* v = std::getenv("RXM_TOPK_DEBUG");
  return v && *v && std::string(v) != "0";
}

// One call's device memory: cudaMalloc'd (the single-device top-k: nothing kept after the call),
// or from the participant's scratch pool, stream-ordered (the mesh's local top-k: its release
// does not synchronize the GPU, so the logical devices of one GPU run their calls at once).
class CallMemory {
 public:
  CallMemory(const CudaResources::PerDevice& device, bool pooled) : device_(device), pooled_(pooled) {}
  void* get(std::size_t bytes) {
    if (pooled_) return scratch_.emplace_back(device_, bytes).data();
    return plain_.emplace_back(device_.device, bytes).data();
  }

 private:
  const CudaResources::PerDevice& device_;
  bool pooled_;
  std::deque<ScratchBuffer> scratch_;
  std::deque<DeviceBuffer> plain_;
};
}  // namespace

std::vector<std::uint64_t> copy_offsets_to_host(const std::uint64_t* device_offsets, std::size_t count) {
  std::vector<std::uint64_t> host(count);
  RXM_CUDA_CHECK(cudaMemcpy(host.data(), device_offsets, count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  return host;
}

void cuda_topk_host(Context& ctx, const TopkPlan& plan, const TopkRequest& rq) {
  cuda_topk_on(rq.values_device >= 0 ? context_device(ctx, rq.values_device, "topk: the values live")
                                     : cuda_resources(ctx).devices.front(),
               plan, rq, false);
}

void cuda_topk_rows_device(Context& ctx, const DeviceRowsTopk& t) {
  CudaResources::PerDevice dev = context_device(ctx, t.device, "topk: the values live");
  dev.stream = static_cast<cudaStream_t>(t.stream);
  DeviceGuard guard(dev.device);
  const std::size_t stride = t.row_stride ? t.row_stride : t.row_length;
  device::TopkProblem p;
  p.type = t.type;
  p.values = t.values;
  p.total = t.rows == 0 ? 0 : (t.rows - 1) * stride + t.row_length;
  p.rows = t.rows;
  p.row_length = t.row_length;
  p.row_stride = t.row_stride;
  p.max_row_length = t.row_length;
  p.k = t.k;
  p.options = t.options;
  p.index_bytes = t.index_bytes;
  p.out_values = t.out_values;
  p.out_indices = t.out_indices;
  const topk_gpu::PlannedTopk planned = topk_gpu::plan_topk(p, dev.device);  // planned once for both
  ScratchBuffer temp(dev, planned.temp_bytes);  // given back on the caller's stream after the launches
  topk_gpu::launch_planned(planned, temp.data(), planned.temp_bytes, p, dev.stream);
}

void cuda_topk_on(const CudaResources::PerDevice& participant, const TopkPlan& plan, const TopkRequest& rq,
                  bool pooled) {
  const CudaResources::PerDevice* dev = &participant;
  CallMemory memory{*dev, pooled};
  DeviceGuard guard(dev->device);
  cudaStream_t stream = dev->stream;
  const std::size_t key_bytes = size_of(plan.type), places = plan.rows * plan.k;

  device::TopkProblem pr;
  pr.type = plan.type;
  pr.total = plan.total;
  pr.rows = plan.rows;
  pr.row_length = plan.uniform_length;
  pr.max_row_length = plan.max_row_length;
  pr.k = plan.k;
  pr.options = plan.options;
  pr.index_bytes = plan.index_bytes;
  pr.debug_checks = topk_debug_requested();

  // Ask for everything first: not enough device memory fails before any work.
  const bool outputs_here = rq.outputs_device >= 0;
  require(!outputs_here || rq.outputs_device == dev->device,
          "topk: the outputs are on device " + std::to_string(rq.outputs_device) + ", the top-k runs on device " +
              std::to_string(dev->device),
          "pass outputs on the device of the values (a bug in radixmesh)");
  void* out_values = outputs_here ? rq.out_values : memory.get(places * key_bytes);
  void* out_indices = outputs_here ? rq.out_indices : memory.get(places * plan.index_bytes);
  if (rq.values_device < 0) {
    void* staged_values = memory.get(plan.total * key_bytes);
    RXM_CUDA_CHECK(cudaMemcpyAsync(staged_values, rq.values, plan.total * key_bytes, cudaMemcpyHostToDevice, stream));
    pr.values = staged_values;
  } else {
    pr.values = rq.values;
  }
  if (rq.input_indices && rq.input_indices_device >= 0) {
    pr.input_indices = rq.input_indices;
  } else if (rq.input_indices) {
    void* staged_indices = memory.get(plan.total * plan.index_bytes);
    RXM_CUDA_CHECK(cudaMemcpyAsync(staged_indices, rq.input_indices, plan.total * plan.index_bytes,
                                   cudaMemcpyHostToDevice, stream));
    pr.input_indices = staged_indices;
  }
  if (!plan.offsets.empty()) {
    void* offsets = memory.get(plan.offsets.size() * sizeof(std::uint64_t));
    RXM_CUDA_CHECK(cudaMemcpyAsync(offsets, plan.offsets.data(), plan.offsets.size() * sizeof(std::uint64_t),
                                   cudaMemcpyHostToDevice, stream));
    pr.row_offsets = static_cast<const std::uint64_t*>(offsets);
  }
  pr.out_values = out_values;
  pr.out_indices = out_indices;
  if (plan.total == 0) {  // every row empty: nothing to read (and no pointer to read from)
    pr.values = out_values;
  }
  const topk_gpu::PlannedTopk planned = topk_gpu::plan_topk(pr, dev->device);
  void* temp = memory.get(planned.temp_bytes);
  topk_gpu::launch_planned(planned, temp, planned.temp_bytes, pr, stream);
  if (rq.index_base != 0) shift_indices(out_indices, places, plan.index_bytes, rq.index_base, stream);
  if (!outputs_here) {
    RXM_CUDA_CHECK(cudaMemcpyAsync(rq.out_values, out_values, places * key_bytes, cudaMemcpyDeviceToHost, stream));
    RXM_CUDA_CHECK(cudaMemcpyAsync(rq.out_indices, out_indices, places * plan.index_bytes, cudaMemcpyDeviceToHost,
                                   stream));
  }
  RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace radixmesh::detail
