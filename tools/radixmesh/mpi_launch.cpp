#include "mpi_launch.hpp"

#include <cstdlib>
#include <exception>
#include <string>

#include "radixmesh/error.hpp"

#if RXM_CLI_HAS_MPI
#include <mpi.h>

#include "radixmesh/mpi.hpp"
#endif

namespace radixmesh::cli {

namespace {
int world_size_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 1;
}
}  // namespace

bool launched_by_mpi() { return world_size_from_environment() > 1; }

#if RXM_CLI_HAS_MPI

MpiSession::MpiSession(int& argc, char**& argv) {
  if (!launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(&argc, &argv);
  started_ = true;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (started_ && !finalized) MPI_Finalize();
}

int mpi_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int mpi_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

Context mpi_world_context(Backend backend) { return Context::mpi(MPI_COMM_WORLD, backend); }

// The failure a test asks for: RXM_CLI_FAIL_RANK=r and RXM_CLI_FAIL_STEP=<start of a step's
// name> make rank r fail at that step (tests/cli/mpi_sort.sh: every rank stops, nothing remains).
void injected_failure(const std::string& step) {
  const char* rank = std::getenv("RXM_CLI_FAIL_RANK");
  const char* prefix = std::getenv("RXM_CLI_FAIL_STEP");
  if (rank && prefix && std::atoi(rank) == mpi_rank() && step.rfind(prefix, 0) == 0)
    throw_error(ErrorCode::io, "rank " + std::string(rank) + ": a failure injected while " + step + " (RXM_CLI_FAIL_RANK)",
                "unset RXM_CLI_FAIL_RANK and RXM_CLI_FAIL_STEP");
}

void on_every_rank(const std::string& step, const std::function<void()>& run) {
  std::exception_ptr mine;
  try {
    injected_failure(step);
    run();
  } catch (...) {
    mine = std::current_exception();
  }
  // One reduction says both whether any rank failed and which failed first: a rank that failed
  // gives its number, the others the rank count.
  const int mine_or_none = mine ? mpi_rank() : mpi_size();
  int first_failed = 0;
  MPI_Allreduce(&mine_or_none, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (mine) std::rethrow_exception(mine);
  if (first_failed < mpi_size())
    throw_error(ErrorCode::io, "rank " + std::to_string(first_failed) + " failed while " + step +
                                   " (its own message says why); no output was written",
                "fix what that rank reports and run again");
}

std::string broadcast_from_rank0(const std::string& text) {
  unsigned long long length = text.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  std::string out = mpi_rank() == 0 ? text : std::string(length, '\0');
  MPI_Bcast(out.data(), int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

#else

MpiSession::MpiSession(int&, char**&) {
  if (launched_by_mpi())
    throw_error(ErrorCode::unsupported, "radixmesh was started by mpirun with several ranks, but built without MPI",
                "rebuild with -DRXM_ENABLE_MPI=ON (Debian: apt-get install libopenmpi-dev), or run one process");
}
MpiSession::~MpiSession() = default;
int mpi_rank() { return 0; }
int mpi_size() { return 1; }
Context mpi_world_context(Backend) {
  throw_error(ErrorCode::unsupported, "MPI ranks in a build without MPI", "rebuild with -DRXM_ENABLE_MPI=ON");
}
void on_every_rank(const std::string&, const std::function<void()>& run) { run(); }
std::string broadcast_from_rank0(const std::string& text) { return text; }

#endif

}  // namespace radixmesh::cli
