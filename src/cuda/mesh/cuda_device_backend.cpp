// The GPU mesh device: device memory on the participant's GPU, the host API's GPU multisplit, and
// chunk copies on the participant's stream. Logical devices of one GPU each have their own
// stream (the context's CudaResources entry of that participant) and their own buffers.
#include <cuda_runtime_api.h>

#include <numeric>
#include <vector>

#include "core/backends.hpp"
#include "cuda/mesh/copy_pieces.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "mesh/device_backend.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

std::vector<detail::CopyPiece> pieces_of(std::span<const Chunk> chunks, std::size_t elem_bytes) {
  std::vector<detail::CopyPiece> pieces;
  pieces.reserve(chunks.size());
  for (const Chunk& c : chunks)
    if (c.count) pieces.push_back({c.from * elem_bytes, c.to * elem_bytes, c.count * elem_bytes});
  return pieces;
}

class CudaDeviceBackend final : public DeviceBackend {
 public:
  explicit CudaDeviceBackend(const Context& ctx) : ctx_(ctx), resources_(detail::cuda_resources(ctx)) {}

  comm::Location location(int local) const override {
    const auto& d = device(local);
    return {d.device, d.stream};
  }

  std::shared_ptr<std::byte> allocate(int local, std::size_t bytes, const char* what) override {
    const int ordinal = device(local).device;
    detail::DeviceGuard guard(ordinal);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
      cudaGetLastError();
      try {
        detail::throw_device_allocation_failure(ordinal, bytes);
      } catch (Error& e) {
        throw Error(e.code(), std::string(what) + ": " + e.what());
      }
    }
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [ordinal](std::byte* q) {
      detail::DeviceGuard g(ordinal);
      cudaFree(q);
    });
  }

  detail::BadBucket split(int local, const LocalSplit& split) override {
    require(split.spec.kind != detail::BucketSpec::Kind::user,
            "a user bucket functor cannot run on GPU mesh devices through the host API",
            "use a built-in bucket function (radix_digit, identity, delta, splitters, hash) or a CPU mesh");
    // cuda_multisplit queues on the context's stream of the GPU, which for logical devices is not
    // this device's stream: what this device queued before must be done first.
    synchronize(local);
    const detail::MultisplitArgs& a = split.args;
    const std::uint32_t m = a.m;
    bool identity = true;
    for (std::uint32_t b = 0; b < m && identity; ++b) identity = split.remap[b] == b;
    if (identity || a.keys_out == nullptr) {
      detail::BadBucket bad = detail::cuda_multisplit(ctx_, a, split.spec);
      if (!bad.found() && a.keys_out == nullptr) remap_offsets(split, a.offsets);
      return bad;
    }
    // Split by the bucket function into scratch, then move each bucket's block to its place in
    // the remapped (owner-major) order: one batched copy of m blocks for keys, one for values.
    const std::size_t key_bytes = size_of(a.type);
    auto keys_tmp = allocate(local, a.n * key_bytes, "shuffle: the local split's keys");
    std::shared_ptr<std::byte> values_tmp;
    detail::MultisplitArgs by_id = a;
    by_id.keys_out = keys_tmp.get();
    if (a.value_bytes) {
      values_tmp = allocate(local, a.n * a.value_bytes, "shuffle: the local split's values");
      by_id.values_out = values_tmp.get();
    }
    std::vector<std::size_t> id_offsets(m + 1);
    by_id.offsets = id_offsets.data();
    const detail::BadBucket bad = detail::cuda_multisplit(ctx_, by_id, split.spec);
    if (bad.found()) return bad;
    std::vector<std::uint64_t> size_at(m + 1, 0);  // bucket sizes by position
    for (std::uint32_t b = 0; b < m; ++b) size_at[split.remap[b]] = id_offsets[b + 1] - id_offsets[b];
    std::vector<std::size_t> pos_offsets(m + 1, 0);
    for (std::uint32_t q = 0; q < m; ++q) pos_offsets[q + 1] = pos_offsets[q] + size_at[q];
    std::vector<Chunk> moves;
    moves.reserve(m);
    for (std::uint32_t b = 0; b < m; ++b)
      moves.push_back({id_offsets[b], pos_offsets[split.remap[b]], id_offsets[b + 1] - id_offsets[b]});
    copy_chunks(local, keys_tmp.get(), a.keys_out, moves, key_bytes);
    if (a.value_bytes) copy_chunks(local, values_tmp.get(), a.values_out, moves, a.value_bytes);
    std::copy(pos_offsets.begin(), pos_offsets.end(), a.offsets);
    // The scratch is freed on return (cudaFree waits for the device): the copies are done by then.
    return bad;
  }

  void copy_chunks(int local, const void* src, void* dst, std::span<const Chunk> chunks,
                   std::size_t elem_bytes) override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    const std::vector<detail::CopyPiece> pieces = pieces_of(chunks, elem_bytes);
    detail::ScratchBuffer table;
    if (detail::copy_pieces_needs_table(pieces)) table = detail::ScratchBuffer(d, detail::pieces_table_bytes(pieces));
    detail::copy_pieces(src, dst, pieces, table.data(), d.stream);
  }

  void synchronize(int local) override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    RXM_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  }

 private:
  const detail::CudaResources::PerDevice& device(int local) const {
    require(local >= 0 && std::size_t(local) < resources_.devices.size(),
            "mesh device " + std::to_string(local) + " is not a device of this context",
            "pass data on the context's devices");
    return resources_.devices[std::size_t(local)];
  }

  // Histogram-only splits report offsets by bucket id; the mesh wants them by position.
  static void remap_offsets(const LocalSplit& split, std::size_t* offsets) {
    const std::uint32_t m = split.args.m;
    std::vector<std::size_t> size_at(m, 0);
    for (std::uint32_t b = 0; b < m; ++b) size_at[split.remap[b]] = offsets[b + 1] - offsets[b];
    offsets[0] = 0;
    for (std::uint32_t q = 0; q < m; ++q) offsets[q + 1] = offsets[q] + size_at[q];
  }

  Context ctx_;
  detail::CudaResources& resources_;
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_device_backend(const Context& ctx) {
  return std::make_unique<CudaDeviceBackend>(ctx);
}

}  // namespace radixmesh::mesh
