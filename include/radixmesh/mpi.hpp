// radixmesh/mpi.hpp — contexts over MPI ranks: include this (it includes <mpi.h>) to call
// Context::mpi. Plain users of radixmesh need neither this header nor MPI.
//
//   MPI_Init(&argc, &argv);
//   {
//     auto ctx = rxm::Context::mpi(MPI_COMM_WORLD, rxm::Backend::cpu);  // one mesh device per rank
//     auto out = rxm::shuffle(ctx, std::vector{std::span<const std::uint32_t>(my_keys)}, fn, owners);
//   }  // contexts go before MPI_Finalize
//   MPI_Finalize();
//
// Every rank makes the context (it duplicates the communicator, a collective step) and calls the
// same mesh operations in the same order. With Backend::automatic every rank takes a GPU (the
// host's GPU r for its local rank r, NCCL between the ranks, MPI as its control plane) when every
// rank can, and the CPU backend otherwise; Backend::cpu gives CPU ranks; Backend::cuda throws
// rxm::Error(unsupported) on every rank unless every rank has a GPU and NCCL. In a radixmesh built without MPI (RXM_ENABLE_MPI=OFF) the call throws
// rxm::Error(unsupported). Collectives give up after RXM_COMM_TIMEOUT_S seconds (default 300),
// naming the rank that did not arrive.
#pragma once
#include <mpi.h>

#include <type_traits>

#include "radixmesh/context.hpp"

namespace radixmesh {

template <class MpiComm> Context Context::mpi(MpiComm comm, Backend backend) {
  static_assert(std::is_same_v<MpiComm, MPI_Comm>, "Context::mpi takes an MPI_Comm");
  return mpi_from_handle(&comm, sizeof comm, backend);
}

}  // namespace radixmesh
