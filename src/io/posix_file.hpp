// posix_file.hpp — the two ways radixmesh touches files: reading byte ranges of an existing file,
// and writing a new one atomically (the file has no name, or one temporary name, until it is
// complete and put in place). Every failure throws rxm::Error(io) naming the file and the fix.
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

// How an output exists while it is being written.
enum class TemporaryNaming {
  // An unnamed file (O_TMPFILE) in the target's directory, linked into place when complete: no
  // signal, not even SIGKILL, can leave it behind. Where the filesystem has no O_TMPFILE (or
  // /proc/self/fd is missing), falls back to `named`.
  unnamed_if_supported,
  // One hidden named temporary ".<target name>.radixmesh-tmp-<pid>-<serial>" beside the target,
  // renamed over it when complete. For writers that need the file by name, e.g. several
  // processes each writing their slice of one output. Registered for removal by the signal
  // handlers of radixmesh::remove_temporary_files_on_signals().
  named,
};

class AtomicOutputFile {
 public:
  explicit AtomicOutputFile(const std::filesystem::path& target,
                            TemporaryNaming naming = TemporaryNaming::unnamed_if_supported);
  ~AtomicOutputFile();  // removes the temporary file unless publish() succeeded
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  void write(const void* data, std::size_t bytes);  // appends
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);  // pwrite, the position unmoved
  // Flushes the contents to disk (fsync). After it, publish() needs no disk space.
  void finish();
  // Puts the finished file in place under the target's name, replacing any file there.
  void publish();
  void commit() {
    finish();
    publish();
  }
  // The temporary's name while it has one (named mode), else empty.
  const std::filesystem::path& temporary_path() const { return temporary_; }

 private:
  void create_named(const std::filesystem::path& directory);
  void rename_into_place(const std::filesystem::path& from);
  void discard() noexcept;
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  int registry_slot_ = -1;
  bool finished_ = false;
  bool published_ = false;
};

// Another process's view of a named AtomicOutputFile: writes its slice by position and flushes it;
// the owner publishes or removes the file.
class SliceOutputFile {
 public:
  SliceOutputFile(const std::filesystem::path& temporary, const std::filesystem::path& target);
  ~SliceOutputFile();
  SliceOutputFile(const SliceOutputFile&) = delete;
  SliceOutputFile& operator=(const SliceOutputFile&) = delete;
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);
  void finish();  // fsync

 private:
  std::filesystem::path temporary_, target_;
  int fd_ = -1;
};

}  // namespace radixmesh::io_detail
