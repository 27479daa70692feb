// Placeholder while the CUDA top-k lands: host input on a CUDA context runs the CPU reference.
#include "cpu/topk_plan.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {
std::vector<std::uint64_t> copy_offsets_to_host(const std::uint64_t* device_offsets, std::size_t count) {
  std::vector<std::uint64_t> host(count);
  RXM_CUDA_CHECK(cudaMemcpy(host.data(), device_offsets, count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  return host;
}
void cuda_topk_host(Context& ctx, const TopkPlan& plan, const TopkRequest& rq) {
  require(rq.values_device < 0, "topk: device-resident input needs the CUDA top-k, not yet in this build",
          "pass host memory");
  cpu_topk(plan, rq.values, rq.input_indices, rq.out_values, rq.out_indices, ctx.cpu_threads());
}
}  // namespace radixmesh::detail
