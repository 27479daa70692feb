// Stand-ins for the CUDA backend in a build without CUDA (RXM_ENABLE_CUDA=OFF).
#include "core/backends.hpp"
#include "core/context_state.hpp"
#include "core/topk_plan.hpp"
#include "radixmesh/channel.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

CudaDiscovery discover_cuda() {
  CudaDiscovery d;
  d.reason = "this build of radixmesh has no CUDA backend (configured with RXM_ENABLE_CUDA=OFF)";
  return d;
}

namespace detail {
struct CudaResources {};
std::shared_ptr<CudaResources> make_cuda_resources(const Topology&) { return nullptr; }
}  // namespace detail

namespace {
[[noreturn]] void no_cuda() {
  throw_error(ErrorCode::unsupported, "device memory was asked for in a build without CUDA",
              "rebuild with -DRXM_ENABLE_CUDA=ON on a machine with nvcc");
}
}  // namespace

DeviceBuffer::DeviceBuffer(int, std::size_t bytes) { if (bytes) no_cuda(); }
DeviceBuffer::~DeviceBuffer() = default;
PinnedBuffer::PinnedBuffer(std::size_t bytes) { if (bytes) no_cuda(); }
PinnedBuffer::~PinnedBuffer() = default;

// The sort's CUDA entry points (src/cuda/sort): a CUDA context cannot exist in this build, so only
// device-resident input can reach them.
namespace detail {
void cuda_sort_host(Context&, const SortPlan&, void*, void*, SortPhases*) { no_cuda(); }
bool cuda_sort_rows_host(Context&, const SortPlan&, void*, std::size_t, void*) { no_cuda(); }
void sort_device(Context&, KeyType, void*, std::size_t, int, void*, std::size_t, int, std::size_t,
                 const SortOptions&) {
  no_cuda();
}

// Multisplit: device-resident keys cannot exist in this build, so no pointer is a device pointer.
bool is_device_pointer(const void*) { return false; }
BadBucket cuda_multisplit(Context&, const MultisplitArgs&, const BucketSpec&) { no_cuda(); }

// Top-k's CUDA entry points: only device-resident offsets or a CUDA context could reach them.
std::vector<std::uint64_t> copy_offsets_to_host(const std::uint64_t*, std::size_t) { no_cuda(); }
void cuda_topk_host(Context&, const TopkPlan&, const TopkRequest&) { no_cuda(); }
void cuda_topk_rows_device(Context&, const DeviceRowsTopk&) { no_cuda(); }
void cuda_sort_rows_device(Context&, const SortPlan&, const DeviceRowsSort&, const SortOptions&) { no_cuda(); }
LinkReport cuda_link_report(const Context&, bool) { no_cuda(); }
LinkReport cuda_exchange_report(const Context&, const std::vector<std::uint64_t>&) { no_cuda(); }

// Channels: validate_channel refuses every context of this build (they are all CPU contexts).
ChannelState make_channel_state(const Context& ctx, const ChannelLayout& layout, std::span<const int> owners) {
  validate_channel(ctx, layout, owners);
  no_cuda();
}
void receive_pushes(ChannelState&, std::span<void* const>) { no_cuda(); }
void finish_channel(ChannelState&) { no_cuda(); }
}  // namespace detail

}  // namespace radixmesh
