// read_array / write_array / inspect_array_file: validate first (size, header, dtype), then
// allocate, then move bytes in large chunks; writes go through a temporary file and a rename.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "io/npy_header.hpp"
#include "io/posix_file.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/io.hpp"

namespace radixmesh {

using io_detail::quoted;

namespace {

constexpr std::size_t host_array_alignment = 64;

std::string count_of(std::size_t count, KeyType type) {
  return std::to_string(count) + " " + std::string(name_of(type));
}

void check_requested_type(const std::filesystem::path& path, KeyType in_file, std::optional<KeyType> requested) {
  if (requested && *requested != in_file)
    throw_error(ErrorCode::invalid_argument,
                quoted(path) + " holds " + std::string(name_of(in_file)) + " (from its .npy header), but " +
                    std::string(name_of(*requested)) + " was asked for",
                "ask for " + std::string(name_of(in_file)) + " or give no type (a .npy file says its own)");
}

ArrayFileInfo inspect_npy(const io_detail::InputFile& file, std::optional<KeyType> type) {
  unsigned char prefix[12] = {};
  const std::size_t prefix_size = std::size_t(std::min<std::uint64_t>(file.size(), sizeof prefix));
  file.read_at(0, prefix, prefix_size);
  const std::size_t header_bytes = io_detail::npy_header_bytes(prefix, prefix_size, file.path());
  if (header_bytes > file.size())
    throw_error(ErrorCode::io,
                quoted(file.path()) + " is truncated: it ends inside its " + std::to_string(header_bytes) +
                    "-byte .npy header",
                "re-create the file; it was cut short (an interrupted copy or write?)");
  std::string header_text(header_bytes, '\0');
  file.read_at(0, header_text.data(), header_bytes);
  const io_detail::NpyHeader header = io_detail::parse_npy_header(
      reinterpret_cast<const unsigned char*>(header_text.data()), header_bytes, file.path());
  check_requested_type(file.path(), header.type, type);

  const std::uint64_t data_bytes = std::uint64_t(header.count) * size_of(header.type);  // overflow checked by parse
  const std::uint64_t present = file.size() - header.data_offset;
  if (present < data_bytes)
    throw_error(ErrorCode::io,
                quoted(file.path()) + " is truncated: its header promises " + count_of(header.count, header.type) +
                    " (" + std::to_string(data_bytes) + " bytes) but only " + std::to_string(present) +
                    " bytes follow the header",
                "re-create the file; it was cut short (an interrupted copy or write?)");
  // Bytes after the data are ignored, as numpy.load does.
  ArrayFileInfo info;
  info.format = FileFormat::npy;
  info.type = header.type;
  info.count = header.count;
  info.shape = header.shape;
  info.fortran_order = header.fortran_order;
  info.big_endian = header.big_endian;
  info.data_offset = header.data_offset;
  return info;
}

ArrayFileInfo inspect_raw(const io_detail::InputFile& file, std::optional<KeyType> type) {
  if (!type)
    throw_error(ErrorCode::invalid_argument,
                "reading raw file " + quoted(file.path()) + " needs its element type: raw bytes do not say",
                "give the type (u8 ... f64, e.g. --type u32), or use a .npy file, which records it");
  const std::size_t element = size_of(*type);
  if (file.size() % element != 0)
    throw_error(ErrorCode::io,
                quoted(file.path()) + " is " + std::to_string(file.size()) + " bytes, not a multiple of the " +
                    std::to_string(element) + "-byte size of " + std::string(name_of(*type)),
                "check the element type given for it, or whether the file was cut short");
  ArrayFileInfo info;
  info.format = FileFormat::raw;
  info.type = *type;
  info.count = std::size_t(file.size() / element);
  info.shape = {info.count};
  return info;
}

ArrayFileInfo inspect_open_file(const io_detail::InputFile& file, std::optional<KeyType> type) {
  return format_from_path(file.path()) == FileFormat::npy ? inspect_npy(file, type) : inspect_raw(file, type);
}

void byte_swap(void* data, std::size_t count, std::size_t element) {
  auto swap_all = [&](auto tag, auto swap) {
    using U = decltype(tag);
    auto* p = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i < count; ++i, p += sizeof(U)) {
      U x;
      std::memcpy(&x, p, sizeof x);
      x = U(swap(x));
      std::memcpy(p, &x, sizeof x);
    }
  };
  switch (element) {  // std::byteswap is C++23
    case 2: swap_all(std::uint16_t{}, [](std::uint16_t x) { return __builtin_bswap16(x); }); break;
    case 4: swap_all(std::uint32_t{}, [](std::uint32_t x) { return __builtin_bswap32(x); }); break;
    case 8: swap_all(std::uint64_t{}, [](std::uint64_t x) { return __builtin_bswap64(x); }); break;
    default: break;  // one byte: nothing to swap
  }
}

}  // namespace

void HostArray::Free::operator()(void* p) const { std::free(p); }

HostArray::HostArray(KeyType type, std::size_t count) : type_(type), count_(count) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, size_of(type), &bytes))
    throw_error(ErrorCode::out_of_memory, "a host array of " + count_of(count, type) + " does not fit in memory",
                "use a smaller count");
  if (bytes == 0) return;
  require_host_memory(bytes, "a host array of " + count_of(count, type));
  void* p = nullptr;
  if (::posix_memalign(&p, host_array_alignment, bytes) != 0)
    throw_error(ErrorCode::out_of_memory, "allocating a host array of " + count_of(count, type) + " failed",
                "use a smaller size, or free memory");
  data_.reset(p);
}

FileFormat format_from_path(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".npy" ? FileFormat::npy : FileFormat::raw;
}

ArrayFileInfo inspect_array_file(const std::filesystem::path& path, std::optional<KeyType> type) {
  io_detail::InputFile file(path);
  return inspect_open_file(file, type);
}

namespace {

// Elements [first, first + count) of an open, inspected file.
HostArray read_slice(const io_detail::InputFile& file, const ArrayFileInfo& info, std::size_t first,
                     std::size_t count) {
  require(first <= info.count && count <= info.count - first,
          "reading elements [" + std::to_string(first) + ", " + std::to_string(first + count) + ") of " +
              quoted(file.path()) + ", which holds " + std::to_string(info.count),
          "read a slice inside the file (did it change while being read?)");
  require_host_memory(count * size_of(info.type), "reading " + quoted(file.path()));
  HostArray array(info.type, count);
  file.read_at(info.data_offset + std::uint64_t(first) * size_of(info.type), array.data(), array.bytes());
  const bool host_big_endian = std::endian::native == std::endian::big;
  if (info.format == FileFormat::npy && info.big_endian != host_big_endian)
    byte_swap(array.data(), array.size(), size_of(array.type()));
  return array;
}

}  // namespace

HostArray read_array_slice(const std::filesystem::path& path, std::optional<KeyType> type, std::size_t first,
                           std::size_t count) {
  io_detail::InputFile file(path);
  return read_slice(file, inspect_open_file(file, type), first, count);
}

HostArray read_array(const std::filesystem::path& path, std::optional<KeyType> type) {
  io_detail::InputFile file(path);
  const ArrayFileInfo info = inspect_open_file(file, type);
  return read_slice(file, info, 0, info.count);
}

std::string io_detail::array_file_header(const std::filesystem::path& path, KeyType type, std::size_t count,
                                         std::optional<FileFormat> format, std::span<const std::size_t> shape) {
  std::size_t bytes = 0;
  require(!__builtin_mul_overflow(count, size_of(type), &bytes),
          "writing " + quoted(path) + ": " + count_of(count, type) + " overflows a byte count",
          "pass the real element count");
  std::size_t product = 1;
  for (std::size_t extent : shape) product *= extent;
  require(shape.empty() || product == count,
          "writing " + quoted(path) + ": a shape of " + std::to_string(product) + " elements for " + count_of(count, type),
          "pass a shape whose extents multiply to the count");
  const std::size_t flat[] = {count};
  return format.value_or(format_from_path(path)) == FileFormat::npy
             ? make_npy_header(type, shape.empty() ? std::span<const std::size_t>(flat) : shape, path)
             : std::string();
}

ArrayFileWriter::ArrayFileWriter(const std::filesystem::path& path, KeyType type, std::size_t count,
                                 std::optional<FileFormat> format, const std::vector<std::size_t>& shape)
    : path_(path), type_(type), count_(count) {
  // Everything that can be refused is refused before the file exists.
  const std::string header = io_detail::array_file_header(path, type, count, format, shape);
  file_ = std::make_unique<io_detail::AtomicOutputFile>(path);
  file_->write(header.data(), header.size());
}

ArrayFileWriter::~ArrayFileWriter() = default;
ArrayFileWriter::ArrayFileWriter(ArrayFileWriter&&) noexcept = default;
ArrayFileWriter& ArrayFileWriter::operator=(ArrayFileWriter&&) noexcept = default;

void ArrayFileWriter::write(const void* data, std::size_t count) {
  require(file_ != nullptr, "writing " + quoted(path_) + " after it was published or moved from",
          "make a new ArrayFileWriter");
  require(data != nullptr || count == 0,
          "writing " + quoted(path_) + ": data is null but count = " + std::to_string(count), "pass the array to write");
  require(count <= count_ - written_,
          "writing " + quoted(path_) + ": " + std::to_string(count) + " more elements than the " +
              std::to_string(count_ - written_) + " left of " + count_of(count_, type_),
          "write exactly the count the writer was made with");
  file_->write(data, count * size_of(type_));
  written_ += count;
}

void ArrayFileWriter::finish() {
  require(file_ != nullptr, "finishing " + quoted(path_) + " after it was published or moved from",
          "make a new ArrayFileWriter");
  require(written_ == count_,
          "finishing " + quoted(path_) + " after " + std::to_string(written_) + " of its " + count_of(count_, type_),
          "write every element before finishing");
  file_->finish();
}

void ArrayFileWriter::publish() {
  finish();
  file_->publish();
  file_.reset();
}

void write_array(const std::filesystem::path& path, KeyType type, const void* data, std::size_t count,
                 std::optional<FileFormat> format) {
  require(data != nullptr || count == 0, "write_array(" + quoted(path) + "): data is null but count = " +
                                             std::to_string(count), "pass the array to write");
  ArrayFileWriter out(path, type, count, format);
  out.write(data, count);
  out.publish();
}

}  // namespace radixmesh
