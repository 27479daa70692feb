#include "io/npy_header.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

#include "io/posix_file.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::io_detail {
namespace {

constexpr unsigned char npy_magic[npy_magic_bytes] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t npy_alignment = 64;           // numpy's ARRAY_ALIGN
constexpr std::size_t npy_growth_axis_digits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

const std::string header_fix = "the file is damaged or was not written by numpy.save; re-create it";

[[noreturn]] void malformed(const std::filesystem::path& file, const std::string& detail) {
  throw_error(ErrorCode::io, quoted(file) + " is not a valid .npy file: " + detail, header_fix);
}

std::uint32_t little_endian_u32(const unsigned char* p, int bytes) {
  std::uint32_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

struct DescrEntry {
  char kind;
  std::size_t size;
  KeyType type;
};
constexpr DescrEntry descr_table[] = {
    {'u', 1, KeyType::u8},  {'u', 2, KeyType::u16}, {'u', 4, KeyType::u32}, {'u', 8, KeyType::u64},
    {'i', 1, KeyType::i8},  {'i', 2, KeyType::i16}, {'i', 4, KeyType::i32}, {'i', 8, KeyType::i64},
    {'f', 2, KeyType::f16}, {'f', 4, KeyType::f32}, {'f', 8, KeyType::f64},
};

// The dict literal numpy writes: {'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple>}, keys
// in any order, either quote style, optional trailing commas, Python 2's "10L" in shapes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::filesystem::path& file) : text_(text), file_(file) {}

  NpyHeader parse() {
    NpyHeader header;
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::size_t>> shape;
    expect('{');
    while (!consume('}')) {
      std::string key = parse_string("a quoted key");
      expect(':');
      if (key == "descr") {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] != '\'' && text_[pos_] != '"')
          throw_error(ErrorCode::unsupported,
                      quoted(file_) + " holds a structured (record) dtype, not an array of numbers",
                      "save one plain column, e.g. numpy.save(path, a['field'])");
        set_once(descr, parse_string("the descr string"), key);
      } else if (key == "fortran_order") {
        set_once(fortran_order, parse_bool(), key);
      } else if (key == "shape") {
        set_once(shape, parse_shape(), key);
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the closing '}'");
    if (!descr || !fortran_order || !shape) fail("it lacks one of the keys 'descr', 'fortran_order' and 'shape'");

    parse_descr(*descr, header);
    header.fortran_order = *fortran_order;
    header.shape = *shape;
    header.count = 1;
    for (std::size_t extent : header.shape)
      if (__builtin_mul_overflow(header.count, extent, &header.count)) fail("the shape's element count overflows");
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(header.count, size_of(header.type), &bytes)) fail("the shape's byte count overflows");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& detail) const {
    // The header is file content: escaped, so that a damaged file cannot drive the terminal.
    const std::string shown = printable_text(text_.substr(0, 200));
    malformed(file_, detail + " in header \"" + shown + (text_.size() > 200 ? "..." : "") + "\"");
  }
  template <class V> void set_once(std::optional<V>& slot, V value, const std::string& key) {
    if (slot) fail("key '" + key + "' appears twice");
    slot = std::move(value);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
  }
  std::string parse_string(const char* what) {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail(std::string("expected ") + what + " at offset " + std::to_string(pos_));
    char quote = text_[pos_++];
    std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool parse_bool() {
    skip_space();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    fail("fortran_order is neither True nor False");
  }
  std::vector<std::size_t> parse_shape() {
    std::vector<std::size_t> shape;
    expect('(');
    while (!consume(')')) {
      skip_space();
      std::size_t value = 0, digits = 0;
      for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_, ++digits)
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, std::size_t(text_[pos_] - '0'), &value))
          fail("a shape extent does not fit in 64 bits");
      if (digits == 0) fail("the shape is not a tuple of non-negative integers");
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long
      shape.push_back(value);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }
  void parse_descr(const std::string& descr, NpyHeader& header) const {
    std::string_view rest = descr;
    char order = '|';
    if (!rest.empty() && std::string_view("<>|=").find(rest[0]) != std::string_view::npos) {
      order = rest[0];
      rest.remove_prefix(1);
    }
    if (rest.size() >= 2) {
      char kind = rest[0];
      std::size_t size = 0;
      bool number = true;
      for (char c : rest.substr(1)) {
        if (c < '0' || c > '9') number = false;
        else size = size * 10 + std::size_t(c - '0');
      }
      for (const auto& entry : descr_table)
        if (number && entry.kind == kind && entry.size == size) {
          header.type = entry.type;
          header.big_endian = order == '>' || (order == '=' && std::endian::native == std::endian::big);
          return;
        }
    }
    std::string why = "radixmesh reads the numpy dtypes u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8 (any byte order)";
    if (rest == "V2")
      throw_error(ErrorCode::unsupported,
                  quoted(file_) + " has dtype '" + descr + "' (anonymous 2-byte void: bfloat16 from ml_dtypes, maybe); " +
                      "a .npy file cannot say it holds bfloat16",
                  "store bf16 keys as a raw file (any extension but .npy) and read it with type bf16");
    throw_error(ErrorCode::unsupported, quoted(file_) + " has dtype '" + descr + "', which radixmesh does not sort",
                why + "; convert it, e.g. numpy.save(path, a.astype('<f4'))");
  }

  std::string_view text_;
  const std::filesystem::path& file_;
  std::size_t pos_ = 0;
};

}  // namespace

bool starts_with_npy_magic(const unsigned char* bytes, std::size_t size) {
  return size >= npy_magic_bytes && std::memcmp(bytes, npy_magic, npy_magic_bytes) == 0;
}

std::size_t npy_header_bytes(const unsigned char* prefix, std::size_t prefix_size, const std::filesystem::path& file) {
  if (!starts_with_npy_magic(prefix, prefix_size))
    throw_error(ErrorCode::io,
                quoted(file) + " is not a .npy file: it does not start with the magic string \\x93NUMPY",
                "write it with numpy.save, or give it another extension to read it as raw binary");
  if (prefix_size < npy_v1_prefix_bytes) malformed(file, "the file ends inside the header");
  const int major = prefix[6], minor = prefix[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    throw_error(ErrorCode::unsupported,
                quoted(file) + " is .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                    ", which radixmesh does not know (it reads 1.0, 2.0 and 3.0)",
                "re-save it with numpy.save");
  std::size_t length_bytes = major == 1 ? 2 : 4;
  if (prefix_size < 8 + length_bytes) malformed(file, "the file ends inside the header");
  std::size_t text_bytes = little_endian_u32(prefix + 8, int(length_bytes));
  if (text_bytes > npy_max_header_bytes)
    malformed(file, "the header claims to be " + std::to_string(text_bytes) + " bytes long");
  return 8 + length_bytes + text_bytes;
}

NpyHeader parse_npy_header(const unsigned char* bytes, std::size_t size, const std::filesystem::path& file) {
  std::size_t total = npy_header_bytes(bytes, size, file);
  if (size < total) malformed(file, "the file ends inside the header");
  std::size_t prefix = bytes[6] == 1 ? 10 : 12;
  std::string_view text(reinterpret_cast<const char*>(bytes) + prefix, total - prefix);
  NpyHeader header = HeaderParser(text, file).parse();
  header.data_offset = total;
  return header;
}

std::string npy_descr_of(KeyType type, const std::filesystem::path& file) {
  if (type == KeyType::bf16)
    throw_error(ErrorCode::unsupported,
                "cannot write " + quoted(file) + " as .npy: numpy has no bfloat16 dtype, so the file could not say "
                "what it holds",
                "write bf16 keys as a raw file (any extension but .npy, e.g. keys.bf16.bin) and read it back with "
                "type bf16, or convert them to f32");
  for (const auto& entry : descr_table)
    if (entry.type == type) {
      char order = entry.size == 1 ? '|' : (std::endian::native == std::endian::little ? '<' : '>');
      return std::string(1, order) + entry.kind + std::to_string(entry.size);
    }
  throw_error(ErrorCode::internal, "no .npy descr for " + std::string(name_of(type)), "please report this bug");
}

std::string make_npy_header(KeyType type, std::span<const std::size_t> shape, const std::filesystem::path& file) {
  // numpy/lib/format.py _write_array_header: sorted keys, repr values (a 1-tuple keeps its comma),
  // spare digits for the first axis to grow.
  std::string tuple;
  for (std::size_t extent : shape) tuple += (tuple.empty() ? "" : ", ") + std::to_string(extent);
  if (shape.size() == 1) tuple += ",";
  std::string dict = "{'descr': '" + npy_descr_of(type, file) + "', 'fortran_order': False, 'shape': (" + tuple +
                     "), }";
  if (!shape.empty()) dict.append(npy_growth_axis_digits - std::to_string(shape[0]).size(), ' ');
  // _wrap_header: pad with spaces and end in '\n' so the data starts on a 64-byte boundary;
  // like numpy, an already aligned length still gets a full 64 bytes of padding.
  auto wrap = [&](int major, std::size_t length_bytes) {
    std::size_t text = dict.size() + 1;
    std::size_t padding = npy_alignment - (8 + length_bytes + text) % npy_alignment;
    std::size_t header_length = text + padding;
    std::string out(reinterpret_cast<const char*>(npy_magic), npy_magic_bytes);
    out += char(major);
    out += char(0);
    for (std::size_t i = 0; i < length_bytes; ++i) out += char((header_length >> (8 * i)) & 0xff);
    out += dict;
    out.append(padding, ' ');
    out += '\n';
    return out;
  };
  std::string v1 = wrap(1, 2);
  return v1.size() - npy_v1_prefix_bytes <= 0xffff ? v1 : wrap(2, 4);
}

}  // namespace radixmesh::io_detail
