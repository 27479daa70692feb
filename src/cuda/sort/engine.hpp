// The sort engines behind one call: which one runs, and sorting encoded keys with it.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/sort/cub_engine.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

// automatic -> the engine measured faster for this shape (engine_choice.cpp); others as asked.
SortEngine choose_engine(SortEngine requested, const EncodedSortShape& shape);

// Sorts encoded keys[selector] (and values) with `engine` (never automatic); selector names the
// result on return. temp == nullptr: only sets temp_bytes.
void sort_encoded_double_buffer(SortEngine engine, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                const EncodedSortShape& shape, cudaStream_t stream);

// Sorts encoded keys_in into keys_out (values_in into values_out), inputs untouched, ranges
// disjoint. temp == nullptr: only sets temp_bytes.
void sort_encoded_copy(SortEngine engine, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                       const void* values_in, void* values_out, const EncodedSortShape& shape, cudaStream_t stream);

// Carves aligned sub-buffers out of one temporary allocation, CUB-style: the same sequence of
// take() calls on a null base gives the total size, on a real base the pointers.
class TempCarver {
 public:
  explicit TempCarver(void* base) : base_(static_cast<char*>(base)) {}
  void* take(std::size_t bytes) {
    char* p = base_ ? base_ + used_ : nullptr;
    used_ += (bytes + alignment - 1) / alignment * alignment;
    return p;
  }
  std::size_t used() const { return used_; }
  static constexpr std::size_t alignment = 256;  // what cudaMalloc gives: 16-byte vectors and CUB are happy

 private:
  char* base_;
  std::size_t used_ = 0;
};

}  // namespace radixmesh::detail
