// Context::mpi in a build without MPI (RXM_ENABLE_MPI=OFF): a clear error.
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh {

Context Context::mpi_from_handle(const void*, std::size_t, Backend) {
  throw_error(ErrorCode::unsupported, "Context::mpi: this build of radixmesh has no MPI transport (RXM_ENABLE_MPI=OFF)",
              "install an MPI (Debian: openmpi-bin libopenmpi-dev) and rebuild with -DRXM_ENABLE_MPI=ON");
}

}  // namespace radixmesh
