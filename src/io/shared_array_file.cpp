// SharedArrayFile (radixmesh/io.hpp): one output file that several processes (MPI ranks) write,
// each its own slice, published once by its creator.
#include <string>

#include "io/npy_header.hpp"
#include "io/posix_file.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/io.hpp"

namespace radixmesh {

SharedArrayFile SharedArrayFile::create(const std::filesystem::path& target, KeyType type, std::size_t count,
                                        std::optional<FileFormat> format) {
  SharedArrayFile f;
  f.target_ = target;
  f.type_ = type;
  f.count_ = count;
  const std::string header = io_detail::array_file_header(target, type, count, format);
  f.data_offset_ = header.size();
  f.owner_ = std::make_unique<io_detail::AtomicOutputFile>(target, io_detail::TemporaryNaming::named);
  f.owner_->write(header.data(), header.size());
  f.temporary_ = f.owner_->temporary_path();
  return f;
}

SharedArrayFile SharedArrayFile::join(const std::filesystem::path& temporary, const std::filesystem::path& target,
                                      KeyType type, std::size_t count, std::optional<FileFormat> format) {
  SharedArrayFile f;
  f.target_ = target;
  f.temporary_ = temporary;
  f.type_ = type;
  f.count_ = count;
  f.data_offset_ = io_detail::array_file_header(target, type, count, format).size();
  f.slice_ = std::make_unique<io_detail::SliceOutputFile>(temporary, target);
  return f;
}

SharedArrayFile::~SharedArrayFile() = default;
SharedArrayFile::SharedArrayFile(SharedArrayFile&&) noexcept = default;
SharedArrayFile& SharedArrayFile::operator=(SharedArrayFile&&) noexcept = default;

void SharedArrayFile::write_at(std::size_t first, const void* data, std::size_t count) {
  require(first <= count_ && count <= count_ - first,
          "writing elements [" + std::to_string(first) + ", " + std::to_string(first + count) + ") of " +
              io_detail::quoted(target_) + ", made for " + std::to_string(count_),
          "write inside the file's element count");
  require(owner_ || slice_, "writing " + io_detail::quoted(target_) + " after it was published or moved from",
          "make a new SharedArrayFile");
  const std::uint64_t offset = data_offset_ + std::uint64_t(first) * size_of(type_);
  if (owner_)
    owner_->write_at(offset, data, count * size_of(type_));
  else
    slice_->write_at(offset, data, count * size_of(type_));
}

void SharedArrayFile::finish() {
  if (owner_) owner_->finish();
  if (slice_) slice_->finish();
}

void SharedArrayFile::publish() {
  require(owner_ != nullptr, "publishing " + io_detail::quoted(target_) + " from a process that did not create it",
          "publish from the creator, after every process finished its slice");
  owner_->publish();
  owner_.reset();
}

}  // namespace radixmesh
