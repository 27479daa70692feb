// Checking a sort's device memory against what is free, before anything is allocated.
#pragma once
#include <cstddef>
#include <string>

namespace radixmesh::detail {

// Throws Error(out_of_memory) naming `what`, the bytes needed and the bytes free on `device`
// when `bytes` exceeds the free memory (cudaMemGetInfo).
void require_device_memory(int device, std::size_t bytes, const std::string& what);

}  // namespace radixmesh::detail
