// npy_header.hpp — the .npy header: magic, version, length, and the Python dict literal
// {'descr': '<u4', 'fortran_order': False, 'shape': (10,), } that numpy writes
// (numpy/lib/format.py, "NEP 1 — A simple file format for NumPy arrays").
//
// Versions 1.0 (2-byte header length), 2.0 (4-byte) and 3.0 (4-byte, UTF-8 header) are read;
// 1.0 is written, or 2.0 when the header does not fit, as numpy does. Element types: the
// descrs u1..u8, i1..i8, f2, f4, f8 with byte order '<', '>', '|' or '='. bfloat16 has no numpy
// descr (ml_dtypes stores it as the anonymous 'V2'), so bf16 is refused with a fix: use a raw file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "radixmesh/io.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh::io_detail {

inline constexpr std::size_t npy_magic_bytes = 6;  // "\x93NUMPY"
// Version 1.0's prefix: magic, 2 version bytes, 2-byte header length.
inline constexpr std::size_t npy_v1_prefix_bytes = 10;
// Headers above this are refused as corrupt rather than allocated (numpy's default limit is 10000).
inline constexpr std::size_t npy_max_header_bytes = std::size_t(1) << 20;

struct NpyHeader {
  KeyType type = KeyType::u8;
  bool big_endian = false;  // data must be byte-swapped on a little-endian host
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t count = 1;        // product of shape (1 for a 0-d array)
  std::size_t data_offset = 0;  // prefix + header text
};

bool starts_with_npy_magic(const unsigned char* bytes, std::size_t size);

// How long the whole header (prefix + text) is, from the first 12 bytes (or fewer if the file is
// shorter): throws io on a bad magic, an unknown version or an implausible length.
std::size_t npy_header_bytes(const unsigned char* prefix, std::size_t prefix_size, const std::filesystem::path& file);

// Parses a complete header (prefix + text) of `size` bytes.
NpyHeader parse_npy_header(const unsigned char* bytes, std::size_t size, const std::filesystem::path& file);

// The header numpy.save writes for a C-order array of `shape` of `type`, byte for byte (spare
// room after the shape so the first axis can grow in place, padded to a multiple of 64).
std::string make_npy_header(KeyType type, std::span<const std::size_t> shape, const std::filesystem::path& file);

// What a new array file of `count` elements starts with: the npy header (shape {count}, or `shape`
// when given: its extents must multiply to count), or nothing for a raw file (the format from the
// path's extension unless given). Throws what write_array refuses: a count whose bytes overflow, a
// type the format cannot name, a shape of another count. Defined in array_file.cpp.
std::string array_file_header(const std::filesystem::path& path, KeyType type, std::size_t count,
                              std::optional<FileFormat> format, std::span<const std::size_t> shape = {});

// The numpy descr of a type on this host ("<u4"); throws unsupported for bf16.
std::string npy_descr_of(KeyType type, const std::filesystem::path& file);

}  // namespace radixmesh::io_detail
