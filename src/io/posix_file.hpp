// posix_file.hpp — the two ways radixmesh touches files: reading byte ranges of an existing file,
// and writing a new one atomically (temporary file in the target's directory, renamed over the
// target only once complete). Every failure throws rxm::Error(io) naming the file and the fix.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace radixmesh::io_detail {

// "'path'" for messages.
std::string quoted(const std::filesystem::path& path);

class InputFile {
 public:
  explicit InputFile(const std::filesystem::path& path);  // must be a readable regular file
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  // Reads exactly `bytes` from `offset` with pread in large chunks; throws if the file is
  // shorter than that (it may have shrunk since it was inspected).
  void read_at(std::uint64_t offset, void* out, std::size_t bytes) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

class AtomicOutputFile {
 public:
  // Creates a uniquely named temporary file beside `target`.
  explicit AtomicOutputFile(const std::filesystem::path& target);
  ~AtomicOutputFile();  // removes the temporary file unless commit() succeeded
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  void write(const void* data, std::size_t bytes);
  // Flushes to disk, closes and renames the temporary over the target.
  void commit();

 private:
  void discard() noexcept;
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace radixmesh::io_detail
