// One human-readable byte count for every error message that names an amount of
// memory
// ("needs X of device memory, only Y of Z is free"), host or device.
#pragma once
#include <cstddef>
#include <string>

namespace radixmesh::detail {

// "512 bytes" below 1 KiB; otherwise the largest binary unit that fits, three
// decimals, and the exact count: "1.500 GiB (1610612736 bytes)". The exact
// count keeps near-equal sizes apart.
std::string format_bytes(std::size_t bytes);

}  // namespace radixmesh::detail
