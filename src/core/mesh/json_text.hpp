// Tiny helpers that the plan printers share to write JSON and figures by hand (src/core links no
// JSON library).
#pragma once
#include <cstdint>
#include <string>

namespace radixmesh::mesh {

// A JSON string literal: quotes, with ", \ and control characters escaped.
std::string json_quote(const std::string& text);
// A finite double in the shortest form that reads back exactly ("%.17g"); JSON has no inf/nan, so
// those print as null.
std::string json_number(double value);
// "450.0 GB/s" (decimal gigabytes, one decimal).
std::string format_rate(double bytes_per_s);
// "1.234 ms" (or us / s, three decimals).
std::string format_seconds(double seconds);

}  // namespace radixmesh::mesh
