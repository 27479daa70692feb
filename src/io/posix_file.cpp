#include "io/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <system_error>

#include "io/temporary_registry.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::io_detail {
namespace {

// Large enough that the per-call cost vanishes, small enough not to stall on one huge syscall.
constexpr std::size_t io_chunk_bytes = std::size_t(64) << 20;

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

[[noreturn]] void io_error(const std::string& problem, const std::string& fix) {
  throw_error(ErrorCode::io, problem, fix);
}

std::filesystem::path directory_of(const std::filesystem::path& target) {
  std::filesystem::path parent = target.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

std::string quoted(const std::filesystem::path& path) { return "'" + printable_text(path.string()) + "'"; }

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int error = errno;
    io_error("cannot open " + quoted(path) + " for reading: " + errno_text(error),
             error == ENOENT ? "check the path; the file does not exist"
                             : "check the path and that you may read the file");
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    io_error("cannot read " + quoted(path) + ": it is not a regular file", "name a file, not a directory or device");
  }
  size_ = std::uint64_t(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(std::uint64_t offset, void* out, std::size_t bytes) const {
  auto* cursor = static_cast<unsigned char*>(out);
  while (bytes > 0) {
    ssize_t got = ::pread(fd_, cursor, std::min(bytes, io_chunk_bytes), off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int error = errno;
      io_error("cannot read " + quoted(path_) + " at byte " + std::to_string(offset) + ": " + errno_text(error),
               "check the disk and the file");
    }
    if (got == 0)
      io_error("cannot read " + quoted(path_) + ": it ended at byte " + std::to_string(offset) + ", " +
                   std::to_string(bytes) + " bytes short (did it change while being read?)",
               "make sure no other program is writing the file, then read it again");
    cursor += got;
    offset += std::uint64_t(got);
    bytes -= std::size_t(got);
  }
}

namespace {

std::filesystem::path temporary_name(const std::filesystem::path& directory, const std::filesystem::path& target) {
  // Unique among threads (serial), processes (pid) and earlier runs (clock); O_EXCL makes sure.
  static std::atomic<std::uint64_t> serial{0};
  const auto stamp = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  return directory / ("." + target.filename().string() + ".radixmesh-tmp-" + std::to_string(::getpid()) + "-" +
                      std::to_string(serial++) + "-" + std::to_string(stamp % 1000000007u));
}

// Gives the unnamed file open as `fd` the name `name`; returns 0 or the errno. Through
// /proc/self/fd (any user may), else AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
int link_unnamed(int fd, const std::filesystem::path& name) {
  const std::string by_descriptor = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, by_descriptor.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  const int error = errno;
  if (error == EEXIST) return error;
  return ::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0 ? 0 : error;
}

}  // namespace

AtomicOutputFile::AtomicOutputFile(const std::filesystem::path& target, TemporaryNaming naming) : target_(target) {
  std::error_code ec;
  if (std::filesystem::is_directory(target, ec))
    io_error("cannot write " + quoted(target) + ": it is a directory", "name a file");
  const std::filesystem::path directory = directory_of(target);
#ifdef O_TMPFILE
  if (naming == TemporaryNaming::unnamed_if_supported && ::access("/proc/self/fd", X_OK) == 0) {
    fd_ = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    // On failure (no O_TMPFILE on this filesystem, or a directory problem) the named path below
    // either works or reports the problem.
    if (fd_ >= 0) return;
  }
#endif
  create_named(directory);
}

void AtomicOutputFile::create_named(const std::filesystem::path& directory) {
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temporary_ = temporary_name(directory, target_);
    // Registered before it exists, so that no moment has it on disk but unknown to the handler.
    registry_slot_ = register_temporary(temporary_.c_str());
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) break;
    const int error = errno;
    unregister_temporary(registry_slot_);
    registry_slot_ = -1;
    temporary_.clear();
    if (error != EEXIST || attempt >= 100)
      io_error("cannot write " + quoted(target_) + ": cannot create a file in directory " + quoted(directory) + ": " +
                   errno_text(error),
               error == ENOENT || error == ENOTDIR ? "create the directory first, or choose another path"
                                                   : "choose a directory you may write to, or fix its permissions");
  }
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!published_) discard();
}

void AtomicOutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
  unregister_temporary(registry_slot_);
  registry_slot_ = -1;
}

namespace {

// Writes all `bytes` at the file position (offset < 0) or at `offset` (pwrite); 0 or the errno.
int write_all(int fd, const void* data, std::size_t bytes, std::int64_t offset) {
  const auto* cursor = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const std::size_t chunk = std::min(bytes, io_chunk_bytes);
    const ssize_t put = offset < 0 ? ::write(fd, cursor, chunk) : ::pwrite(fd, cursor, chunk, off_t(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return put < 0 ? errno : EIO;
    cursor += put;
    bytes -= std::size_t(put);
    if (offset >= 0) offset += put;
  }
  return 0;
}

[[noreturn]] void write_failed(const std::filesystem::path& target, int error) {
  io_error("cannot write " + quoted(target) + ": " + errno_text(error),
           error == ENOSPC || error == EDQUOT ? "free disk space or choose another disk"
                                              : "check the disk and the directory");
}

}  // namespace

void AtomicOutputFile::write(const void* data, std::size_t bytes) {
  if (const int error = write_all(fd_, data, bytes, -1)) {
    discard();
    write_failed(target_, error);
  }
}

void AtomicOutputFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  if (const int error = write_all(fd_, data, bytes, std::int64_t(offset))) {
    discard();
    write_failed(target_, error);
  }
}

SliceOutputFile::SliceOutputFile(const std::filesystem::path& temporary, const std::filesystem::path& target)
    : temporary_(temporary), target_(target) {
  fd_ = ::open(temporary.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0)
    io_error("cannot write " + quoted(target) + ": cannot open its temporary file " + quoted(temporary) + ": " +
                 errno_text(errno),
             "run every rank on a filesystem they all see (the output's directory must be shared)");
}

SliceOutputFile::~SliceOutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SliceOutputFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  if (const int error = write_all(fd_, data, bytes, std::int64_t(offset))) write_failed(target_, error);
}

void SliceOutputFile::finish() {
  if (::fsync(fd_) != 0)
    io_error("cannot write " + quoted(target_) + ": flushing this rank's slice to disk failed: " + errno_text(errno),
             "check the disk and free space");
}

void AtomicOutputFile::finish() {
  // fsync before the file gets its name: after a crash the target is either the old file or the
  // complete new one.
  if (::fsync(fd_) != 0) {
    const int error = errno;
    discard();
    io_error("cannot write " + quoted(target_) + ": flushing it to disk failed: " + errno_text(error),
             "check the disk and free space");
  }
  finished_ = true;
}

void AtomicOutputFile::rename_into_place(const std::filesystem::path& from) {
  if (::rename(from.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    discard();
    io_error("cannot write " + quoted(target_) + ": renaming the finished temporary file over it failed: " +
                 errno_text(error),
             "check that the target is not a directory and that you may replace it");
  }
}

void AtomicOutputFile::publish() {
  if (!finished_) finish();
  if (temporary_.empty()) {
    // Unnamed: link it straight to the target when no file is there (atomic: linkat never
    // replaces), else link it to a temporary name and rename that over the old file.
    int error = link_unnamed(fd_, target_);
    for (int attempt = 0; error == EEXIST && attempt < 100; ++attempt) {
      temporary_ = temporary_name(directory_of(target_), target_);
      registry_slot_ = register_temporary(temporary_.c_str());
      error = link_unnamed(fd_, temporary_);
      if (error == 0) {
        rename_into_place(temporary_);
        break;
      }
      unregister_temporary(registry_slot_);
      registry_slot_ = -1;
      temporary_.clear();
    }
    if (error != 0) {
      discard();
      io_error("cannot write " + quoted(target_) + ": giving the finished file its name failed: " + errno_text(error),
               "check that you may write the directory");
    }
  } else {
    rename_into_place(temporary_);
  }
  unregister_temporary(registry_slot_);
  registry_slot_ = -1;
  temporary_.clear();
  ::close(fd_);
  fd_ = -1;
  published_ = true;
}

}  // namespace radixmesh::io_detail
