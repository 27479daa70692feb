#include "mesh/device_backend.hpp"

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

std::unique_ptr<DeviceBackend> device_backend_for(const Context& ctx) {
  const MeshDevices local = ctx.local_mesh_devices();
  for (int i = 0; i < local.count; ++i)
    if (ctx.mesh_backend(local.first + i) != Backend::cpu)
      throw_error(ErrorCode::unsupported,
                  "the mesh operations run on CPU mesh devices only in this build, and mesh device " +
                      std::to_string(local.first + i) + " is a " + name_of(ctx.mesh_backend(local.first + i)) +
                      " device",
                  "use Context::cpu_mesh(n), Context::cpu(), or Context::mpi(comm, Backend::cpu)");
  return make_cpu_device_backend(ctx.cpu_threads());
}

}  // namespace radixmesh::mesh
