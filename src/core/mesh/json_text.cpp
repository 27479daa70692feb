#include "core/mesh/json_text.hpp"

#include <cmath>
#include <cstdio>

namespace radixmesh::mesh {

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string format_rate(double bytes_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB/s", bytes_per_s / 1e9);
  return text;
}

std::string format_seconds(double seconds) {
  char text[32];
  if (seconds >= 1.0)
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3f us", seconds * 1e6);
  return text;
}

}  // namespace radixmesh::mesh
