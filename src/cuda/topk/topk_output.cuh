// Ordering and writing the multi-block path's winners.
#pragma once
#include "cuda/topk/topk_common.cuh"

namespace radixmesh::detail::topk_gpu {

// Places past a short row's winners: index `pad` (sorts after every real index), rank 0.
template <class U> __global__ void pad_winners(Params<U> p, std::size_t row_count, std::uint64_t pad) {
  for_each_index(row_count * p.k, [&](std::uint64_t i) {
    const std::uint64_t r = i / p.k, j = i % p.k;
    if (j >= p.win_count[r]) {
      p.win_rank[i] = 0;
      p.win_idx[i] = pad;
    }
  });
}

// Final output: values from their ranks (the transform is a bijection), indices as asked.
template <class U, class Index>
__global__ void write_output(Params<U> p, std::size_t row_count, const U* ranks, const std::uint64_t* idx,
                             std::uint64_t pad, const Index* input_indices, U* out_values, Index* out_indices) {
  for_each_index(row_count * p.k, [&](std::uint64_t i) {
    const std::uint64_t position = idx[i];
    if (position == pad) {
      out_values[i] = 0;
      out_indices[i] = Index(-1);
      return;
    }
    out_values[i] = raw_of_rank<U>(ranks[i], p.type, p.options);
    out_indices[i] = input_indices ? input_indices[p.rows.begin(i / p.k) + position] : Index(position);
  });
}

__global__ inline void segment_offsets(std::uint64_t* offsets, std::size_t row_count, std::uint64_t k) {
  for_each_index(row_count + 1, [&](std::uint64_t i) { offsets[i] = i * k; });
}


}  // namespace radixmesh::detail::topk_gpu
