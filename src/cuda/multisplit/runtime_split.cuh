// The definition behind runtime_split.hpp, included by the runtime_split_*.cu files that
// instantiate it (RXM_INSTANTIATE_RUNTIME_SPLIT).
#pragma once

#include "cuda/multisplit/runtime_split.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/scratch.hpp"
#include "radixmesh/device/multisplit.cuh"

namespace radixmesh::detail {

template <class U, cuda::RuntimeShape Shape>
void run_runtime_split(const CudaResources::PerDevice& device, const cuda::RuntimeBuckets<U, Shape>& buckets,
                       const RuntimeSplitArgs& args) {
  namespace ms = device::multisplit_detail;
  const auto* keys_in = static_cast<const U*>(args.keys_in);
  auto* keys_out = static_cast<U*>(args.keys_out);
  auto split = [&](auto value_bytes) {
    constexpr int ValueBytes = decltype(value_bytes)::value;
    std::size_t temp_bytes = 0;
    auto run = [&](void* temp) {
      RXM_CUDA_CHECK((ms::multisplit<U, ValueBytes>(temp, temp_bytes, keys_in, keys_out, args.values_in,
                                                    args.values_out, args.n, buckets, args.m, args.offsets,
                                                    device.stream, args.bad_index, args.tuning)));
    };
    run(nullptr);
    ScratchBuffer temp(device, temp_bytes);
    run(temp.data());
  };
  with_value_bytes(args.value_bytes, split);
}

#define RXM_INSTANTIATE_RUNTIME_SPLIT(U, SHAPE)                                                             \
  template void run_runtime_split<U, SHAPE>(const CudaResources::PerDevice&, const cuda::RuntimeBuckets<U, SHAPE>&, \
                                            const RuntimeSplitArgs&);

}  // namespace radixmesh::detail
