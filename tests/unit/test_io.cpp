// Raw and .npy files: round trips for every key type, numpy's exact byte layout, header variants
// numpy and older writers produce, and one rxm::Error naming file, problem and fix for each bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "common/scratch_dir.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/io.hpp"
#include "radixmesh/keys.hpp"

namespace rxm = radixmesh;
namespace fs = std::filesystem;
using rxm::FileFormat;
using rxm::KeyType;

namespace {

class IoTest : public ::testing::Test {
 protected:
  fs::path file(const std::string& name) const { return dir_ / name; }

  void write_bytes(const fs::path& path, const std::string& bytes) const {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  std::string read_bytes(const fs::path& path) const {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // The names in the test directory: checks that failed writes leave no file behind.
  std::vector<std::string> listing() const { return scratch_.names(); }

  rxm::testing::ScratchDir scratch_{"radixmesh_test_io"};
  fs::path dir_ = scratch_.path();
};

// Expects an rxm::Error with `code` whose message names the file and contains `problem` and a fix.
template <class F>
void expect_error(F&& f, rxm::ErrorCode code, const fs::path& path, const std::string& problem) {
  try {
    f();
    ADD_FAILURE() << "no error for " << path << " (expected: " << problem << ")";
  } catch (const rxm::Error& e) {
    std::string message = e.what();
    EXPECT_EQ(int(e.code()), int(code)) << message;
    EXPECT_NE(message.find(path.filename().string()), std::string::npos) << "file not named: " << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_NE(message.find("fix:"), std::string::npos) << message;
  }
}

std::string npy_prefix(int major, std::size_t header_length) {
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out += char((header_length >> (8 * i)) & 0xff);
  return out;
}
// A .npy file with the given dict text (no alignment, as some writers do) and raw data bytes.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  std::string text = dict + "\n";
  return npy_prefix(major, text.size()) + text + data;
}
template <class T> std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

const std::vector<std::size_t> round_trip_sizes = {0, 1, 7, 4093, 100003};

TEST_F(IoTest, RawRoundTripEveryType) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (KeyType type : rxm::all_key_types) {
    rxm::visit_key_type(type, [&](auto tag) {
      using T = decltype(tag);
      for (std::size_t n : round_trip_sizes) {
        SCOPED_TRACE(std::string(rxm::name_of(type)) + " n = " + std::to_string(n));
        auto keys = rxm::testing::random_bit_patterns<T>(n, seed + n);
        fs::path path = file("keys." + std::string(rxm::name_of(type)) + ".bin");
        rxm::write_array(path, type, keys.data(), n);
        EXPECT_EQ(fs::file_size(path), n * sizeof(T));
        auto info = rxm::inspect_array_file(path, type);
        EXPECT_EQ(info.format, FileFormat::raw);
        EXPECT_EQ(info.count, n);
        EXPECT_EQ(info.data_offset, 0u);
        rxm::HostArray back = rxm::read_array(path, type);
        ASSERT_EQ(back.type(), type);
        ASSERT_EQ(back.size(), n);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(back.data()) % 64, 0u);
        EXPECT_TRUE(n == 0 || std::memcmp(back.data(), keys.data(), n * sizeof(T)) == 0);
      }
    });
  }
  EXPECT_EQ(listing().size(), 12u) << "one file per type, no temporaries left";
}

TEST_F(IoTest, NpyRoundTripEveryTypeButBf16) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (KeyType type : rxm::all_key_types) {
    if (type == KeyType::bf16) continue;
    rxm::visit_key_type(type, [&](auto tag) {
      using T = decltype(tag);
      for (std::size_t n : round_trip_sizes) {
        SCOPED_TRACE(std::string(rxm::name_of(type)) + " n = " + std::to_string(n));
        auto keys = rxm::testing::random_bit_patterns<T>(n, seed + n);
        fs::path path = file("keys_" + std::string(rxm::name_of(type)) + ".npy");
        rxm::write_array(path, type, keys.data(), n);
        auto info = rxm::inspect_array_file(path, std::nullopt);
        EXPECT_EQ(info.format, FileFormat::npy);
        EXPECT_EQ(info.type, type);
        EXPECT_EQ(info.count, n);
        EXPECT_EQ(info.shape, std::vector<std::size_t>{n});
        EXPECT_FALSE(info.fortran_order);
        EXPECT_FALSE(info.big_endian);
        EXPECT_EQ(info.data_offset % 64, 0u);
        EXPECT_EQ(fs::file_size(path), info.data_offset + n * sizeof(T));
        for (std::optional<KeyType> asked : {std::optional<KeyType>(), std::optional<KeyType>(type)}) {
          rxm::HostArray back = rxm::read_array(path, asked);
          ASSERT_EQ(back.type(), type);
          ASSERT_EQ(back.size(), n);
          EXPECT_TRUE(n == 0 || std::memcmp(back.data(), keys.data(), n * sizeof(T)) == 0);
        }
      }
    });
  }
}

TEST_F(IoTest, WritesNumpysExactBytes) {
  // What numpy 1.24's numpy.save writes for np.arange(10, dtype='<u4'): magic, version 1.0,
  // header length 118, the dict, 21 - len("10") spare spaces and padding to 128 bytes, '\n'.
  const std::string dict_u4 = "{'descr': '<u4', 'fortran_order': False, 'shape': (10,), }";
  const std::string expected_u4 = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict_u4 + std::string(59, ' ') + "\n";
  std::vector<std::uint32_t> values(10);
  std::iota(values.begin(), values.end(), 0u);
  rxm::write_array(file("a.npy"), KeyType::u32, values.data(), values.size());
  EXPECT_EQ(read_bytes(file("a.npy")), expected_u4 + bytes_of(values));

  // np.arange(12, dtype='<i4').reshape(3, 4), written with its shape: 21 - len("3") spare spaces.
  const std::string dict_2d = "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }";
  std::vector<std::int32_t> twelve(12);
  std::iota(twelve.begin(), twelve.end(), 0);
  {
    rxm::ArrayFileWriter w(file("m.npy"), KeyType::i32, 12, std::nullopt, {3, 4});
    w.write(twelve.data(), 12);
    w.publish();
  }
  EXPECT_EQ(read_bytes(file("m.npy")),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict_2d + std::string(58, ' ') + "\n" + bytes_of(twelve));
  EXPECT_EQ(rxm::inspect_array_file(file("m.npy"), std::nullopt).shape, (std::vector<std::size_t>{3, 4}));
  EXPECT_THROW(rxm::ArrayFileWriter(file("bad.npy"), KeyType::i32, 12, std::nullopt, {5, 4}), rxm::Error);
  EXPECT_FALSE(fs::exists(file("bad.npy")));

  // np.array([1.5, -2, 0], dtype='<f2') and np.arange(3, dtype='u1').
  const std::string dict_f2 = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
  std::vector<std::uint16_t> halves = {0x3e00, 0xc000, 0x0000};
  rxm::write_array(file("h.npy"), KeyType::f16, halves.data(), 3);
  EXPECT_EQ(read_bytes(file("h.npy")),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict_f2 + std::string(60, ' ') + "\n" + bytes_of(halves));
  const std::string dict_u1 = "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
  std::vector<std::uint8_t> bytes = {0, 1, 2};
  rxm::write_array(file("b.npy"), KeyType::u8, bytes.data(), 3);
  EXPECT_EQ(read_bytes(file("b.npy")),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict_u1 + std::string(60, ' ') + "\n" + bytes_of(bytes));
}

TEST_F(IoTest, ReadsNumpysBytesIncludingBigEndian) {
  // np.save of np.arange(123456789012, 123456789015, dtype='>i8'): big-endian, swapped on read.
  const std::string dict = "{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }";
  const std::string data("\x00\x00\x00\x1c\xbe\x99\x1a\x14\x00\x00\x00\x1c\xbe\x99\x1a\x15\x00\x00\x00\x1c\xbe\x99\x1a\x16", 24);
  write_bytes(file("big.npy"), std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + std::string(60, ' ') + "\n" + data);
  auto info = rxm::inspect_array_file(file("big.npy"), std::nullopt);
  EXPECT_TRUE(info.big_endian);
  EXPECT_EQ(info.data_offset, 128u);
  rxm::HostArray a = rxm::read_array(file("big.npy"));
  ASSERT_EQ(a.type(), KeyType::i64);
  ASSERT_EQ(a.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.as<std::int64_t>()[i], 123456789012 + i);

  // Big-endian f4 and u2 too.
  write_bytes(file("bigf.npy"), npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                         std::string("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8)));
  rxm::HostArray f = rxm::read_array(file("bigf.npy"), KeyType::f32);
  EXPECT_EQ(f.as<float>()[0], 1.0f);
  EXPECT_EQ(f.as<float>()[1], -2.0f);
  write_bytes(file("bigu.npy"), npy_file("{'descr': '>u2', 'fortran_order': False, 'shape': (1,), }",
                                         std::string("\x12\x34", 2)));
  EXPECT_EQ(rxm::read_array(file("bigu.npy")).as<std::uint16_t>()[0], 0x1234);
}

TEST_F(IoTest, ReadsHeaderVariants) {
  std::vector<double> three = {1.0, -0.0, 2.5};
  struct Variant { const char* name; std::string dict; int major; };
  const Variant variants[] = {
      {"python2 long and no trailing comma", "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,)}", 1},
      {"double quotes, other key order", "{\"shape\": (3,), \"descr\": \"<f8\", \"fortran_order\": False}", 1},
      {"version 2.0", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 2},
      {"version 3.0", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 3},
      {"native order", "{'descr': '=f8', 'fortran_order': False, 'shape': (3,), }", 1},
      {"2-D fortran order", "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 3), }", 1},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    write_bytes(file("v.npy"), npy_file(v.dict, bytes_of(three), v.major));
    rxm::HostArray a = rxm::read_array(file("v.npy"));
    ASSERT_EQ(a.type(), KeyType::f64);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(std::memcmp(a.data(), three.data(), 24), 0);
  }
  auto info = rxm::inspect_array_file(file("v.npy"), std::nullopt);
  EXPECT_TRUE(info.fortran_order);
  EXPECT_EQ(info.shape, (std::vector<std::size_t>{1, 3}));

  // 0-d: one element; a zero extent: none.
  write_bytes(file("scalar.npy"), npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", std::string("\x07\x00\x00\x00", 4)));
  rxm::HostArray scalar = rxm::read_array(file("scalar.npy"));
  ASSERT_EQ(scalar.size(), 1u);
  EXPECT_EQ(scalar.as<std::int32_t>()[0], 7);
  write_bytes(file("empty.npy"), npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (4, 0), }", ""));
  EXPECT_EQ(rxm::read_array(file("empty.npy")).size(), 0u);
  // Bytes after the data are ignored, as numpy.load does.
  write_bytes(file("extra.npy"), npy_file("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", "\x01\xff\x55"));
  rxm::HostArray extra = rxm::read_array(file("extra.npy"));
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_EQ(extra.as<std::int8_t>()[1], -1);
}

TEST_F(IoTest, ReadsAFileLargerThanOneIoChunk) {
  const std::size_t n = (std::size_t(80) << 20) / 4;  // 80 MiB: more than one 64 MiB pread
  std::vector<std::uint32_t> keys(n);
  std::iota(keys.begin(), keys.end(), 17u);
  rxm::write_array(file("big.npy"), KeyType::u32, keys.data(), n);
  rxm::HostArray back = rxm::read_array(file("big.npy"));
  ASSERT_EQ(back.size(), n);
  EXPECT_EQ(std::memcmp(back.data(), keys.data(), n * 4), 0);
}

TEST_F(IoTest, Bf16IsRawOnly) {
  std::vector<rxm::bfloat16_t> keys = {{0x3f80}, {0xc000}, {0x7fc0}};
  fs::path npy = file("keys_bf16.npy");
  expect_error([&] { rxm::write_array(npy, KeyType::bf16, keys.data(), keys.size()); }, rxm::ErrorCode::unsupported,
               npy, "bfloat16");
  EXPECT_TRUE(listing().empty()) << "a refused write leaves nothing";
  rxm::write_array(file("keys.bf16"), KeyType::bf16, keys.data(), keys.size());
  rxm::HostArray back = rxm::read_array(file("keys.bf16"), KeyType::bf16);
  EXPECT_EQ(std::memcmp(back.data(), keys.data(), 6), 0);
  // ml_dtypes' bfloat16 .npy says only '|V2': refused with the raw-file fix.
  write_bytes(file("ml.npy"), npy_file("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }", "\x80\x3f"));
  expect_error([&] { rxm::read_array(file("ml.npy")); }, rxm::ErrorCode::unsupported, file("ml.npy"), "bfloat16");
  expect_error([&] { rxm::read_array(file("ml.npy"), KeyType::bf16); }, rxm::ErrorCode::unsupported, file("ml.npy"),
               "raw file");
}

TEST_F(IoTest, FormatFromPath) {
  EXPECT_EQ(rxm::format_from_path("a.npy"), FileFormat::npy);
  EXPECT_EQ(rxm::format_from_path("dir.d/A.NPY"), FileFormat::npy);
  EXPECT_EQ(rxm::format_from_path("a.bin"), FileFormat::raw);
  EXPECT_EQ(rxm::format_from_path("a.npy.bin"), FileFormat::raw);
  EXPECT_EQ(rxm::format_from_path("npy"), FileFormat::raw);
}

TEST_F(IoTest, FormatCanBeForced) {
  std::vector<std::uint16_t> keys = {1, 2, 3};
  rxm::write_array(file("x.tmp"), KeyType::u16, keys.data(), 3, FileFormat::npy);
  EXPECT_EQ(read_bytes(file("x.tmp")).substr(0, 6), "\x93NUMPY");
  rxm::write_array(file("y.npy"), KeyType::u16, keys.data(), 3, FileFormat::raw);
  EXPECT_EQ(fs::file_size(file("y.npy")), 6u);
}

TEST_F(IoTest, HostArray) {
  rxm::HostArray empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.bytes(), 0u);
  for (KeyType type : rxm::all_key_types) {
    rxm::HostArray a(type, 1001);
    EXPECT_EQ(a.bytes(), 1001 * rxm::size_of(type));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u);
    std::memset(a.data(), 0xab, a.bytes());  // ASan: the whole range is ours
  }
  expect_error([] { rxm::HostArray huge(KeyType::u64, std::size_t(1) << 58); }, rxm::ErrorCode::out_of_memory,
               "host array", "needs");
}

// ---------------------------------------------------------------- bad input, one error each

TEST_F(IoTest, MissingAndUnreadableFiles) {
  expect_error([&] { rxm::read_array(file("nope.npy")); }, rxm::ErrorCode::io, file("nope.npy"), "does not exist");
  expect_error([&] { rxm::inspect_array_file(file("nope.bin"), KeyType::u8); }, rxm::ErrorCode::io,
               file("nope.bin"), "does not exist");
  fs::create_directory(file("folder.npy"));
  expect_error([&] { rxm::read_array(file("folder.npy")); }, rxm::ErrorCode::io, file("folder.npy"),
               "not a regular file");
  if (::geteuid() != 0) {  // root reads any file, so permissions cannot make one unreadable
    write_bytes(file("secret.bin"), "abcd");
    fs::permissions(file("secret.bin"), fs::perms::none);
    expect_error([&] { rxm::read_array(file("secret.bin"), KeyType::u8); }, rxm::ErrorCode::io, file("secret.bin"),
                 "cannot open");
  }
}

TEST_F(IoTest, RawFileProblems) {
  write_bytes(file("odd.bin"), std::string(10, 'x'));
  expect_error([&] { rxm::read_array(file("odd.bin"), KeyType::u32); }, rxm::ErrorCode::io, file("odd.bin"),
               "not a multiple of the 4-byte size of u32");
  expect_error([&] { rxm::read_array(file("odd.bin")); }, rxm::ErrorCode::invalid_argument, file("odd.bin"),
               "needs its element type");
  EXPECT_EQ(rxm::read_array(file("odd.bin"), KeyType::i16).size(), 5u);
}

TEST_F(IoTest, UnsupportedDtypes) {
  for (const char* descr : {"<c8", "|b1", "<U4", "|O", "<f16", "<u3", "<M8[ns]"}) {
    SCOPED_TRACE(descr);
    write_bytes(file("d.npy"),
                npy_file(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }", "12345678"));
    expect_error([&] { rxm::read_array(file("d.npy")); }, rxm::ErrorCode::unsupported, file("d.npy"),
                 std::string("dtype '") + descr + "'");
  }
  write_bytes(file("rec.npy"),
              npy_file("{'descr': [('a', '<i4'), ('b', '<f4')], 'fortran_order': False, 'shape': (1,), }", "12345678"));
  expect_error([&] { rxm::read_array(file("rec.npy")); }, rxm::ErrorCode::unsupported, file("rec.npy"), "structured");
}

TEST_F(IoTest, TruncatedNpy) {
  std::vector<std::uint32_t> keys(10, 7);
  rxm::write_array(file("t.npy"), KeyType::u32, keys.data(), keys.size());
  std::string whole = read_bytes(file("t.npy"));
  write_bytes(file("t.npy"), whole.substr(0, whole.size() - 1));
  expect_error([&] { rxm::read_array(file("t.npy")); }, rxm::ErrorCode::io, file("t.npy"),
               "header promises 10 u32 (40 bytes) but only 39 bytes follow");
  write_bytes(file("t.npy"), whole.substr(0, 50));
  expect_error([&] { rxm::read_array(file("t.npy")); }, rxm::ErrorCode::io, file("t.npy"), "ends inside its 128-byte");
  write_bytes(file("t.npy"), whole.substr(0, 9));
  expect_error([&] { rxm::read_array(file("t.npy")); }, rxm::ErrorCode::io, file("t.npy"), "ends inside the header");
  write_bytes(file("t.npy"), "");
  expect_error([&] { rxm::read_array(file("t.npy")); }, rxm::ErrorCode::io, file("t.npy"), "magic");
}

TEST_F(IoTest, MalformedHeaders) {
  const std::string good = "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }";
  write_bytes(file("m.npy"), "PK\x03\x04 this is a zip, not an npy");
  expect_error([&] { rxm::read_array(file("m.npy")); }, rxm::ErrorCode::io, file("m.npy"), "magic string");

  std::string v4 = npy_file(good, "abcd");
  v4[6] = 4;
  write_bytes(file("m.npy"), v4);
  expect_error([&] { rxm::read_array(file("m.npy")); }, rxm::ErrorCode::unsupported, file("m.npy"), "version 4.0");

  write_bytes(file("m.npy"), npy_prefix(1, 0xffff) + good);
  expect_error([&] { rxm::read_array(file("m.npy")); }, rxm::ErrorCode::io, file("m.npy"), "truncated");
  write_bytes(file("m.npy"), npy_prefix(2, 0x7fffffff) + good);
  expect_error([&] { rxm::read_array(file("m.npy")); }, rxm::ErrorCode::io, file("m.npy"), "claims to be");

  struct Bad { const char* dict; const char* problem; };
  const Bad bad[] = {
      {"{'descr': '<u4', 'shape': (1,), }", "lacks one of the keys"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (-1,), }", "non-negative integers"},
      {"{'descr': '<u4', 'fortran_order': 0, 'shape': (1,), }", "neither True nor False"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (1,), } junk", "text after"},
      {"{'descr': '<u4' 'fortran_order': False, 'shape': (1,), }", "expected '}'"},
      {"['descr', '<u4']", "expected '{'"},
      {"{'descr: '<u4', 'fortran_order': False, 'shape': (1,), }", "expected ':'"},
      {"{'descr': '<u4', 'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", "appears twice"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", "64 bits"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "overflows"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (1,), ", "expected"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.dict);
    write_bytes(file("m.npy"), npy_file(b.dict, "abcd"));
    expect_error([&] { rxm::read_array(file("m.npy")); }, rxm::ErrorCode::io, file("m.npy"), b.problem);
  }
}

TEST_F(IoTest, TypeThatDisagreesWithTheHeader) {
  std::vector<std::uint32_t> keys = {1, 2};
  rxm::write_array(file("u.npy"), KeyType::u32, keys.data(), 2);
  expect_error([&] { rxm::read_array(file("u.npy"), KeyType::f32); }, rxm::ErrorCode::invalid_argument,
               file("u.npy"), "holds u32 (from its .npy header), but f32 was asked for");
  expect_error([&] { rxm::inspect_array_file(file("u.npy"), KeyType::i32); }, rxm::ErrorCode::invalid_argument,
               file("u.npy"), "holds u32");
}

TEST_F(IoTest, UnwritableOutputLeavesNothing) {
  std::vector<std::uint32_t> keys = {1, 2, 3};
  expect_error([&] { rxm::write_array(file("no/such/dir/k.npy"), KeyType::u32, keys.data(), 3); }, rxm::ErrorCode::io,
               file("no/such/dir/k.npy"), "cannot create a file in directory");
  write_bytes(file("plain"), "x");
  expect_error([&] { rxm::write_array(file("plain/k.bin"), KeyType::u32, keys.data(), 3); }, rxm::ErrorCode::io,
               file("plain/k.bin"), "Not a directory");
  fs::create_directory(file("adir"));
  expect_error([&] { rxm::write_array(file("adir"), KeyType::u32, keys.data(), 3); }, rxm::ErrorCode::io,
               file("adir"), "is a directory");
  if (::geteuid() != 0) {  // root may write anywhere
    fs::create_directory(file("locked"));
    fs::permissions(file("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    expect_error([&] { rxm::write_array(file("locked/k.bin"), KeyType::u32, keys.data(), 3); }, rxm::ErrorCode::io,
                 file("locked/k.bin"), "Permission denied");
    EXPECT_TRUE(fs::is_empty(file("locked")));
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"adir", "plain"}));
  EXPECT_TRUE(fs::is_empty(file("adir")));
  expect_error([&] { rxm::write_array(file("n.bin"), KeyType::u32, nullptr, 3); }, rxm::ErrorCode::invalid_argument,
               file("n.bin"), "data is null");
  EXPECT_FALSE(fs::exists(file("n.bin")));
}

TEST_F(IoTest, ReplacesTheTargetOnlyWhenComplete) {
  std::vector<std::uint64_t> first = {1, 2, 3}, second = {4, 5};
  rxm::write_array(file("k.npy"), KeyType::u64, first.data(), first.size());
  rxm::write_array(file("k.npy"), KeyType::u64, second.data(), second.size());
  rxm::HostArray back = rxm::read_array(file("k.npy"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.as<std::uint64_t>()[1], 5u);
  // A refused write (bf16 has no .npy dtype) leaves the old file as it was.
  const std::string before = read_bytes(file("k.npy"));
  std::vector<rxm::bfloat16_t> halves(4);
  EXPECT_THROW(rxm::write_array(file("k.npy"), KeyType::bf16, halves.data(), halves.size()), rxm::Error);
  EXPECT_EQ(read_bytes(file("k.npy")), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"k.npy"});
}

// A damaged header quoted in a message is escaped: the message is one line of printable text, so
// printing it cannot drive the terminal (ESC sequences, BEL, invalid UTF-8).
TEST_F(IoTest, DamagedHeaderIsQuotedEscaped) {
  write_bytes(file("d.npy"), npy_file(std::string("{'descr': '<u4', \x1b[2J\x07\xff\xfe\r 'shape': (1,), }"), "abcd"));
  try {
    rxm::read_array(file("d.npy"));
    ADD_FAILURE() << "no error for a damaged header";
  } catch (const rxm::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(int(e.code()), int(rxm::ErrorCode::io)) << message;
    EXPECT_NE(message.find("\\x1B[2J\\x07\\xFF\\xFE\\r"), std::string::npos) << message;
    for (unsigned char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << int(c) << " in " << message;
  }
}

TEST(PrintableText, EscapesWhatIsNotPrintable) {
  EXPECT_EQ(rxm::printable_text("plain 'text' \\ 123"), "plain 'text' \\ 123");
  EXPECT_EQ(rxm::printable_text(std::string("a\nb\tc\rd\0e", 9)), "a\\nb\\tc\\rd\\x00e");
  EXPECT_EQ(rxm::printable_text("\x1b[31mred\x7f"), "\\x1B[31mred\\x7F");
  EXPECT_EQ(rxm::printable_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(rxm::printable_text("\xff\xfe\xc3"), "\\xFF\\xFE\\xC3");             // invalid, truncated
  EXPECT_EQ(rxm::printable_text("\xc0\xaf \xed\xa0\x80"), "\\xC0\\xAF \\xED\\xA0\\x80");  // overlong, surrogate
  EXPECT_EQ(rxm::printable_text("\xc2\x9b" "2J \xe2\x80\xae"), "\\u{009B}2J \\u{202E}");  // C1 CSI, RTL override
  const std::string once = rxm::printable_text("\x01\xff\n\xe2\x80\xae ok");
  EXPECT_EQ(rxm::printable_text(once), once);  // escaping twice changes nothing
}

}  // namespace
