// printable_text: bytes from files, paths or command lines made safe to print in one line of a
// message. A terminal acts on control bytes (ESC sequences, C1 CSI, carriage returns) and on
// bidirectional overrides, and invalid UTF-8 garbles whatever follows it, so those are escaped.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "radixmesh/error.hpp"

namespace radixmesh {
namespace {

// Length of the valid UTF-8 sequence starting at `at` (2..4) and its code point, or 0 when the
// bytes there are not one (overlong forms, surrogates and code points past U+10FFFF included).
int utf8_sequence(std::string_view bytes, std::size_t at, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(at);
  int length = 0;
  std::uint32_t minimum = 0;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2, minimum = 0x80, code_point = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3, minimum = 0x800, code_point = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4, minimum = 0x10000, code_point = lead & 0x07;
  else return 0;
  if (at + std::size_t(length) > bytes.size()) return 0;
  for (int i = 1; i < length; ++i) {
    const unsigned char next = byte(at + std::size_t(i));
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return length;
}

// Code points a terminal or text renderer acts on rather than shows: C1 controls, line and
// paragraph separators, and bidirectional marks, embeddings, overrides and isolates.
bool invisible_control(std::uint32_t c) {
  return c < 0xA0 || (c >= 0x200E && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0xFEFF;
}

}  // namespace

std::string printable_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  char escape[16];
  for (std::size_t at = 0; at < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[at]);
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
      ++at;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++at;
      continue;
    }
    std::uint32_t code_point = 0;
    const int length = c >= 0x80 ? utf8_sequence(bytes, at, code_point) : 0;
    if (length == 0) {
      std::snprintf(escape, sizeof escape, "\\x%02X", unsigned(c));
      out += escape;
      ++at;
    } else if (invisible_control(code_point)) {
      std::snprintf(escape, sizeof escape, "\\u{%04X}", unsigned(code_point));
      out += escape;
      at += std::size_t(length);
    } else {
      out.append(bytes.substr(at, std::size_t(length)));
      at += std::size_t(length);
    }
  }
  return out;
}

}  // namespace radixmesh
