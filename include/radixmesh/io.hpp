// radixmesh/io.hpp — raw binary and .npy files.
//
// Readers validate before they allocate (size a multiple of the element size, header sane,
// dtype supported, enough host memory), then read in 64 MiB chunks into 64-byte aligned memory.
// Writers write to a temporary file in the target directory and rename it over the target only
// when complete (after fsync), so a failed or interrupted write leaves no partial output.
//
// .npy: versions 1.0, 2.0 and 3.0 are read; the header numpy.save would write is written (1.0).
// dtypes: u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8 in any byte order ('<', '>', '|', '='); big-endian
// data is byte-swapped on read. bf16 has no numpy dtype (ml_dtypes saves it as the anonymous
// '|V2'), so bf16 is raw-only: writing or reading bf16 as .npy throws Error(unsupported) whose fix
// says to use a raw file. Every error names the file, the problem and the fix: missing or
// unreadable file (io), malformed or truncated .npy (io), unsupported dtype (unsupported), raw
// size not a multiple of the element size (io), a type that disagrees with the header
// (invalid_argument), an output directory that cannot be written (io).
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "radixmesh/export.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh {

enum class FileFormat { raw, npy };
// .npy by extension, otherwise raw.
RXM_API FileFormat format_from_path(const std::filesystem::path& path);

// An array in host memory (64-byte aligned), with its element type.
class RXM_API HostArray {
 public:
  HostArray() = default;
  // Uninitialised. Throws Error(out_of_memory), saying needed vs available, before allocating
  // more than the host has.
  HostArray(KeyType type, std::size_t count);
  KeyType type() const { return type_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * size_of(type_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <class T> T* as() { return static_cast<T*>(data()); }
  template <class T> const T* as() const { return static_cast<const T*>(data()); }

 private:
  struct Free { void operator()(void* p) const; };
  KeyType type_ = KeyType::u8;
  std::size_t count_ = 0;
  std::unique_ptr<void, Free> data_;
};

struct ArrayFileInfo {
  FileFormat format = FileFormat::raw;
  KeyType type = KeyType::u8;
  std::size_t count = 0;           // elements
  std::vector<std::size_t> shape;  // npy shape (raw: {count})
  bool fortran_order = false;
  bool big_endian = false;         // npy data stored big-endian ('>' descr): byte-swapped on read
  std::size_t data_offset = 0;     // bytes before the first element
};

// Reads the header (npy) or the size (raw, which needs `type`) and validates it.
RXM_API ArrayFileInfo inspect_array_file(const std::filesystem::path& path, std::optional<KeyType> type);

// Reads a whole file. For .npy the dtype comes from the header (if `type` is given it must agree);
// big-endian data is byte-swapped; a Fortran-order array is read as its flat memory order
// (radixmesh treats every array as 1-D). Raw files need `type`.
RXM_API HostArray read_array(const std::filesystem::path& path, std::optional<KeyType> type = std::nullopt);

// Writes `count` elements atomically (temp file + rename). Format from the extension unless given.
RXM_API void write_array(const std::filesystem::path& path, KeyType type, const void* data, std::size_t count,
                 std::optional<FileFormat> format = std::nullopt);

}  // namespace radixmesh
