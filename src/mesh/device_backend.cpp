#include "mesh/device_backend.hpp"

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

std::unique_ptr<DeviceBackend> device_backend_for(const Context& ctx) {
  const MeshDevices local = ctx.local_mesh_devices();
  const Backend first = ctx.mesh_backend(local.first);
  for (int i = 1; i < local.count; ++i)
    if (ctx.mesh_backend(local.first + i) != first)
      throw_error(ErrorCode::unsupported,
                  "mesh devices " + std::to_string(local.first) + " and " + std::to_string(local.first + i) +
                      " of this process run on different backends (" + name_of(first) + ", " +
                      name_of(ctx.mesh_backend(local.first + i)) + ")",
                  "drive CPU and GPU mesh devices from different processes");
  if (first == Backend::cuda) return make_cuda_device_backend(ctx);
  return make_cpu_device_backend(ctx.cpu_threads());
}

#if !defined(RXM_HAS_CUDA)
std::unique_ptr<DeviceBackend> make_cuda_device_backend(const Context&) {
  throw_error(ErrorCode::unsupported, "GPU mesh devices in a build without CUDA",
              "rebuild with -DRXM_ENABLE_CUDA=ON on a machine with nvcc");
}
#endif

}  // namespace radixmesh::mesh
