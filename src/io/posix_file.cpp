#include "io/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <system_error>

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

AtomicOutputFile::AtomicOutputFile(const std::filesystem::path& target) : target_(target) {
  std::error_code ec;
  if (std::filesystem::is_directory(target, ec))
    io_error("cannot write " + quoted(target) + ": it is a directory", "name a file");
  // Unique among threads (counter), processes (pid) and earlier runs (clock); O_EXCL makes sure.
  static std::atomic<std::uint64_t> counter{0};
  const std::filesystem::path directory = directory_of(target);
  for (int attempt = 0; fd_ < 0; ++attempt) {
    auto stamp = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    temporary_ = directory / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                              std::to_string(counter++) + "-" + std::to_string(stamp % 1000000007u));
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt >= 100)) {
      int error = errno;
      io_error("cannot write " + quoted(target) + ": cannot create a file in directory " + quoted(directory) + ": " +
                   errno_text(error),
               error == ENOENT || error == ENOTDIR ? "create the directory first, or choose another path"
                                                   : "choose a directory you may write to, or fix its permissions");
    }
  }
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!committed_) discard();
}

void AtomicOutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
}

void AtomicOutputFile::write(const void* data, std::size_t bytes) {
  const auto* cursor = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    ssize_t put = ::write(fd_, cursor, std::min(bytes, io_chunk_bytes));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      int error = put < 0 ? errno : EIO;
      discard();
      io_error("cannot write " + quoted(target_) + ": " + errno_text(error),
               error == ENOSPC || error == EDQUOT ? "free disk space or choose another disk"
                                                  : "check the disk and the directory");
    }
    cursor += put;
    bytes -= std::size_t(put);
  }
}

void AtomicOutputFile::commit() {
  // fsync before rename: after a crash the target is either the old file or the complete new one.
  int error = ::fsync(fd_) != 0 ? errno : 0;
  if (::close(fd_) != 0 && error == 0) error = errno;
  fd_ = -1;
  if (error != 0) {
    discard();
    io_error("cannot write " + quoted(target_) + ": flushing it to disk failed: " + errno_text(error),
             "check the disk and free space");
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    error = errno;
    discard();
    io_error("cannot write " + quoted(target_) + ": renaming the finished temporary file over it failed: " +
                 errno_text(error),
             "check that the target is not a directory and that you may replace it");
  }
  committed_ = true;
}

}  // namespace radixmesh::io_detail
