// Counting encoded keys per value of one digit: the bucket sizes of the split plan (sort_host.cpp),
// computed chunk by chunk while the upload is still running.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace radixmesh::detail {

inline constexpr int max_histogram_bits = 8;

// counts[d] += number of keys whose bits [shift, shift + bits) equal d, for n encoded keys of
// key_bytes each. counts: device memory, 2^bits entries, zeroed by the caller. bits <= 8.
void launch_digit_histogram(const void* keys, std::size_t n, int key_bytes, int shift, int bits,
                            unsigned long long* counts, cudaStream_t stream);

}  // namespace radixmesh::detail
