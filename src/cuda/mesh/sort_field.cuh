// A key's sort key on the device, in the key's own width: bits [begin_bit, end_bit) of keys.hpp's
// order-preserving encoding, flipped for descending (the order every mesh sort step compares by:
// the key ranges, the cuts of sorted runs, the merges).
#pragma once
#include "core/backends.hpp"
#include "cuda/multisplit/runtime_buckets.cuh"

namespace radixmesh::detail {

template <class U> struct SortField {
  cuda::RuntimeEncoding<U> encoding;
  U flip, mask;
  int shift;
  static SortField of(const SortPlan& plan) {
    const int bits = plan.end_bit - plan.begin_bit;
    // An empty range (begin_bit = end_bit, up to the key's width) gives every key the sort key 0
    // without a shift by the whole width.
    return {cuda::RuntimeEncoding<U>::of(plan.type), plan.order == Order::descending ? U(~U(0)) : U(0),
            bits >= int(sizeof(U) * 8) ? U(~U(0)) : U((U(1) << bits) - 1), bits > 0 ? plan.begin_bit : 0};
  }
  __device__ __forceinline__ U operator()(U key) const { return U(U(U(encoding(key) ^ flip) >> shift) & mask); }
};

}  // namespace radixmesh::detail
