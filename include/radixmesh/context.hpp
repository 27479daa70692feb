// radixmesh/context.hpp — the handle every radixmesh call takes first.
//
// A Context owns the devices it runs on (their streams and memory), and knows the machine's
// topology: device names, memory, SM counts, and peer access with its performance rank between
// every pair. With no GPU (or no driver), Context::local() falls back to the CPU backend and says
// why in cpu_fallback_reason().
//
// The mesh. A context is also a mesh of mesh_size() participants ("mesh devices") that the
// multi-device operations (rxm::shuffle) spread over, numbered globally; this process drives
// local_mesh_devices() of them. Context::local() and Context::cpu() are a mesh of one;
// Context::cpu_mesh(n) is n CPU devices in this process; Context::mpi(comm) (radixmesh/mpi.hpp)
// is one participant per MPI rank.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "radixmesh/export.hpp"

namespace radixmesh {

enum class Backend { automatic, cpu, cuda };
RXM_API const char* name_of(Backend b);

struct DeviceInfo {
  int id = -1;                  // CUDA ordinal
  std::string name;             // "NVIDIA H200"
  std::size_t total_memory = 0; // bytes
  std::size_t free_memory = 0;  // bytes, when the context was made
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_memory_per_block_optin = 0;
  std::string pci_bus_id;       // "0000:1b:00.0"
};

struct PeerLink {
  bool access = false;          // cudaDeviceCanAccessPeer
  int performance_rank = -1;    // cudaDevP2PAttrPerformanceRank (lower is faster), -1 if none
  bool native_atomics = false;  // cudaDevP2PAttrNativeAtomicSupported
};

struct Topology {
  std::vector<DeviceInfo> devices;
  std::vector<std::vector<PeerLink>> peers;  // peers[i][j], i != j, indices into `devices`
  std::string driver_version;                // "13.0", empty without a driver
  std::string runtime_version;
};

// What radixmesh could find about CUDA on this machine, without creating a context.
struct CudaDiscovery {
  bool compiled_in = false;  // built with RXM_ENABLE_CUDA
  Topology topology;         // empty when no device
  std::string reason;        // why no device is usable, when devices are empty
};
RXM_API CudaDiscovery discover_cuda();

namespace detail { struct ContextState; }

// The participants of a mesh that this process drives: first, first + 1, ..., first + count - 1.
struct MeshDevices {
  int first = 0;
  int count = 1;
};

class RXM_API Context {
 public:
  // All visible GPUs (or the listed CUDA ordinals), else the CPU backend. With
  // backend == cuda the absence of a GPU is an error instead of a fallback. An ordinal listed
  // more than once gives logical devices: several devices of the context on one GPU, each with
  // its own stream and memory, so that multi-device code runs on a machine with one GPU
  // (Context::local({0, 0, 0, 0}) is four devices on GPU 0). Peer access is enabled between
  // every pair of distinct GPUs that allows it; topology().peers says where it does not.
  static Context local(const std::vector<int>& device_ids = {}, Backend backend = Backend::automatic);
  // The CPU backend on `threads` host threads (0: all hardware threads).
  static Context cpu(unsigned threads = 0);
  // A mesh of n CPU devices in this process (the CI stand-in for n GPUs): each device runs its
  // local steps on threads_per_device host threads (0: the hardware threads shared out, at least
  // one each), and they exchange data by host memory copies.
  static Context cpu_mesh(unsigned n, unsigned threads_per_device = 0);
  // One participant per rank of an MPI communicator (the communicator is duplicated, so
  // radixmesh's messages never meet the caller's). Declared here, defined in radixmesh/mpi.hpp:
  // include that header (it includes <mpi.h>) to call it. In a build without MPI
  // (RXM_ENABLE_MPI=OFF) it throws rxm::Error(unsupported).
  template <class MpiComm> static Context mpi(MpiComm comm, Backend backend = Backend::automatic);

  Backend backend() const;                      // cpu or cuda, never automatic
  const std::vector<DeviceInfo>& devices() const;  // the CUDA devices in use; empty on cpu
  const Topology& topology() const;
  unsigned cpu_threads() const;                 // host threads the CPU backend uses
  const std::string& cpu_fallback_reason() const;  // why CUDA is not used; empty when it is

  int mesh_size() const;                   // participants of the mesh, over every process
  int mesh_rank() const;                   // this process's rank: 0 unless made by mpi()
  MeshDevices local_mesh_devices() const;  // the participants this process drives
  Backend mesh_backend(int participant) const;  // cpu or cuda

  // Scratch memory kept between calls. rxm::sort and rxm::multisplit on a CUDA context take their
  // temporary device memory from a stream-ordered pool per device that the context keeps, so a
  // loop of calls pays no cudaMalloc/cudaFree (and no device synchronization) per call. Each pool
  // keeps up to a quarter of its device's memory between calls (the driver releases more at the
  // next synchronization); a call short of device memory releases the idle part itself, and the
  // last copy of the context releases everything. scratch_bytes(): device memory the pools hold
  // now, over all devices (0 on the CPU backend). release_scratch(): waits for the context's
  // queued work and gives all of it back, e.g. before allocating much device memory yourself.
  std::size_t scratch_bytes() const;
  void release_scratch() const;

  detail::ContextState& state() const { return *state_; }  // backends' private state

 private:
  explicit Context(std::shared_ptr<detail::ContextState> s) : state_(std::move(s)) {}
  // Context::mpi's body: comm points at an MPI_Comm of comm_bytes bytes (src/comm/mpi_context.cpp).
  static Context mpi_from_handle(const void* comm, std::size_t comm_bytes, Backend backend);
  std::shared_ptr<detail::ContextState> state_;
};

// Memory the host can still give, from /proc/meminfo MemAvailable (0 if unknown).
RXM_API std::size_t available_host_memory();
// Throws out_of_memory, naming `what`, the bytes needed and available, before anything is
// allocated, when `bytes` exceeds the available host memory.
RXM_API void require_host_memory(std::size_t bytes, const std::string& what);

}  // namespace radixmesh
