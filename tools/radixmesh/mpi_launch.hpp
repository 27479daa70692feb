// The CLI under mpirun: whether this process is one of several MPI ranks, MPI's start and end
// around the command, and the few collective steps the ranked commands need on top of the
// library's Communicator (every rank learns whether all ranks succeeded at a step, and the
// temporary name rank 0 chose for a shared output). Without MPI in the build, a run under mpirun
// with several ranks is refused with a fix.
#pragma once
#include <functional>
#include <string>

#include "radixmesh/context.hpp"

namespace radixmesh::cli {

// True when mpirun (Open MPI, MPICH/Hydra, PMIx, Slurm's srun) started this process as one of
// several ranks (the launcher's environment variables say so).
bool launched_by_mpi();

// MPI_Init when launched_by_mpi(), MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool started_ = false;
};

int mpi_rank();
int mpi_size();
// Context::mpi over every rank (MPI_COMM_WORLD).
Context mpi_world_context(Backend backend);
// Runs step() on this rank, then tells every rank whether all succeeded: this rank's own error is
// rethrown; where another rank failed, every other rank throws an error naming the step, so that
// no rank waits for one that stopped.
void on_every_rank(const std::string& step, const std::function<void()>& run);
// Rank 0's text, on every rank.
std::string broadcast_from_rank0(const std::string& text);

}  // namespace radixmesh::cli
