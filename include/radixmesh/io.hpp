// radixmesh/io.hpp — raw binary and .npy files.
//
// Readers validate before they allocate (size a multiple of the element size, header sane,
// dtype supported, enough host memory), then read in 64 MiB chunks into 64-byte aligned memory.
// Writers write an unnamed file (O_TMPFILE) in the target's directory and link it into place only
// when complete (after fsync), replacing any old file atomically, so a failed or interrupted write
// leaves neither a partial output nor a temporary file, even when the process is killed. Where
// the filesystem has no O_TMPFILE they use one hidden temporary ".<name>.radixmesh-tmp-<pid>-..."
// instead: removed on every error, and on SIGINT, SIGTERM and SIGHUP only in programs that call
// remove_temporary_files_on_signals() (the radixmesh CLI does; the library installs no handler).
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

// Reads elements [first, first + count) of a file (positioned reads: each MPI rank its slice).
RXM_API HostArray read_array_slice(const std::filesystem::path& path, std::optional<KeyType> type, std::size_t first,
                                   std::size_t count);

// Writes `count` elements atomically (see above). Format from the extension unless given.
RXM_API void write_array(const std::filesystem::path& path, KeyType type, const void* data, std::size_t count,
                 std::optional<FileFormat> format = std::nullopt);

namespace io_detail {
class AtomicOutputFile;
class SliceOutputFile;
}

// write_array in steps, for outputs that must appear together: write every one and finish() it,
// then publish() each. Until published the file has no name (or one hidden temporary name);
// destroying an unpublished writer removes it.
class RXM_API ArrayFileWriter {
 public:
  // Refuses (before creating anything) what write_array refuses: a bad type for the format, an
  // unwritable directory. A .npy file says `shape` (C order; its extents multiply to count) when
  // given, else {count}.
  ArrayFileWriter(const std::filesystem::path& path, KeyType type, std::size_t count,
                  std::optional<FileFormat> format = std::nullopt, const std::vector<std::size_t>& shape = {});
  ~ArrayFileWriter();
  ArrayFileWriter(ArrayFileWriter&&) noexcept;
  ArrayFileWriter& operator=(ArrayFileWriter&&) noexcept;

  // Appends `count` elements; all writes together must give the count the writer was made with.
  void write(const void* data, std::size_t count);
  // Flushes to disk; throws Error(invalid_argument) if fewer or more elements were written.
  void finish();
  // Puts the file in place under its path (finishing it first if needed).
  void publish();

 private:
  std::filesystem::path path_;
  KeyType type_;
  std::size_t count_ = 0, written_ = 0;
  std::unique_ptr<io_detail::AtomicOutputFile> file_;
};

// One output written by several processes, each its own slice (`mpirun radixmesh sort`): the
// creator makes it under a hidden temporary name beside the target, with the header; the others
// join that name; every process writes its slice by position and finishes (fsync); the creator
// publishes it (rename) only once every process has finished. Until then the target is untouched,
// and the creator's object removes the temporary unless it was published (as do the signal
// handlers of remove_temporary_files_on_signals on the creator's process).
class RXM_API SharedArrayFile {
 public:
  static SharedArrayFile create(const std::filesystem::path& target, KeyType type, std::size_t count,
                                std::optional<FileFormat> format = std::nullopt);
  static SharedArrayFile join(const std::filesystem::path& temporary, const std::filesystem::path& target,
                              KeyType type, std::size_t count, std::optional<FileFormat> format = std::nullopt);
  ~SharedArrayFile();
  SharedArrayFile(SharedArrayFile&&) noexcept;
  SharedArrayFile& operator=(SharedArrayFile&&) noexcept;

  const std::filesystem::path& temporary_path() const { return temporary_; }
  void write_at(std::size_t first, const void* data, std::size_t count);  // elements [first, first + count)
  void finish();
  void publish();  // the creator only, after every process finished

 private:
  SharedArrayFile() = default;
  std::filesystem::path target_, temporary_;
  KeyType type_ = KeyType::u8;
  std::size_t count_ = 0, data_offset_ = 0;
  std::unique_ptr<io_detail::AtomicOutputFile> owner_;  // the creator's
  std::unique_ptr<io_detail::SliceOutputFile> slice_;   // a joiner's
};

// Opt-in, for programs: installs handlers for SIGINT, SIGTERM and SIGHUP, each only where the
// signal's disposition is still the default (a handler of the program's own, or SIG_IGN as under
// nohup, stays), that remove the hidden temporary files of writes in progress and then re-raise
// the signal with its default action. Call it once, early in main(), before starting threads.
RXM_API void remove_temporary_files_on_signals();
// Removes the hidden temporary files of writes in progress now. Async-signal-safe: for programs
// with their own signal handlers, which call it there. (Unnamed files need no removal.)
RXM_API void remove_temporary_files_now() noexcept;

}  // namespace radixmesh
