// Synthetic link graphs: the machines the planner's tests model, and the shapes the nominal-figure
// fallback of topology discovery builds when nothing was measured.
#pragma once
#include <cstdint>

#include "core/mesh/link_graph.hpp"

namespace radixmesh::mesh {

// n GPUs on one merged NVSwitch vertex, each GPU joined to it by `lanes` NVLink lanes of
// `generation` (H100/H200: generation 4, 18 lanes = 450 GB/s per direction per GPU). GPUs are
// participants first_participant.., named "h<host>.gpu<i>".
struct NvswitchBox {
  int gpus = 8;
  int generation = 4;
  int lanes = 18;
};
LinkGraph nvswitch_box(const NvswitchBox& spec);

// DGX-1 (V100): eight GPUs in a hybrid cube-mesh of NVLink2, 6 lanes per GPU. Quads {0,1,2,3} and
// {4,5,6,7} are fully connected; cross links join i and i+4. Lanes per pair (25 GB/s per lane
// per direction), as `nvidia-smi topo -m` shows them on a DGX-1V:
//   0-1 1, 0-2 1, 0-3 2, 0-4 2, 1-2 2, 1-3 1, 1-5 2, 2-3 2, 2-6 1, 3-7 1,
//   4-5 1, 4-6 1, 4-7 2, 5-6 2, 5-7 1, 6-7 2.
// Pairs not listed (0-5, 0-6, 0-7, 1-4, 1-6, 1-7, 2-4, 2-5, 2-7, 3-4, 3-5, 3-6) have no NVLink.
// Only the NVLink mesh is modelled (no PCIe or CPUs).
LinkGraph dgx1_hybrid_cube_mesh();

// One CPU with a PCIe root complex; `switches` PCIe switches below it, each with `gpus_per_switch`
// GPUs. GPU links and switch uplinks are PCIe of the given generation and width. With
// peer_to_peer, GPUs reach each other through the switches and the root complex; without it
// (no peer access, e.g. ACS on), each switch forwards only between its GPUs and the CPU, so every
// GPU-to-GPU byte is staged through host memory.
struct PcieTree {
  int switches = 2;
  int gpus_per_switch = 2;
  int generation = 4;
  int gpu_width = 16;
  int uplink_width = 16;
  bool peer_to_peer = true;
  std::uint64_t host_memory_bytes_per_s = 100'000'000'000ull;  // root complex to CPU memory
};
LinkGraph pcie_tree(const PcieTree& spec);

// `hosts` NVSwitch boxes, each with a CPU (PCIe to every GPU) and `nics_per_host` NICs, all NICs
// joined to one network vertex at `nic_bytes_per_s` per direction (400 Gb/s = 50 GB/s). With
// gpu_direct, NIC j of a host hangs off GPU j (mod gpus) by PCIe (GPUDirect RDMA: NIC-direct);
// without it, NICs hang off the CPU and remote bytes are staged through host memory. Participant
// of GPU g on host h: h * gpus + g.
struct MultiHost {
  int hosts = 2;
  NvswitchBox box{};
  int nics_per_host = 1;
  std::uint64_t nic_bytes_per_s = 50'000'000'000ull;
  int pcie_generation = 5;
  bool gpu_direct = true;
};
LinkGraph multi_host(const MultiHost& spec);

}  // namespace radixmesh::mesh
