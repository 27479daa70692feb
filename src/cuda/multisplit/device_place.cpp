// detail::device_place (radixmesh/multisplit.hpp): where a host-level call with a device callable
// (rxm::partition with rxm::device_predicate) runs. Its callers are templates in a user's .cu file
// (radixmesh/device/multisplit.cuh), which cannot reach the context's streams themselves.
#include <string>

#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::detail {

DevicePlace device_place(Context& ctx, const char* call, const void* in, const void* out, std::size_t n) {
  const std::string who(call);
  require(ctx.backend() == Backend::cuda, who + ": a device_predicate runs on a GPU, and this is a CPU context",
          "make the context with Context::local() on a machine with a GPU, or pass a host predicate");
  if (n == 0) return {};
  const int device = device_of_pointer(in);
  require(device >= 0, who + ": the keys are host memory, and a device_predicate runs on device-resident keys only",
          "copy the keys to the device (rxm::DeviceArray) first, or pass a host predicate (a plain callable)");
  const int out_device = device_of_pointer(out);
  require(out_device == device,
          who + ": keys_out is " + (out_device < 0 ? "host memory" : "on device " + std::to_string(out_device)) +
              " but keys_in is on device " + std::to_string(device),
          "put keys_in and keys_out on the same device");
  for (const auto& d : cuda_resources(ctx).devices)
    if (d.device == device) return {device, d.stream};
  throw_error(ErrorCode::invalid_argument,
              who + ": the keys are memory of CUDA device " + std::to_string(device) + ", which is not in the context",
              "make the context with that device (Context::local({" + std::to_string(device) +
                  "})) or copy the keys to a context device");
}

}  // namespace radixmesh::detail
