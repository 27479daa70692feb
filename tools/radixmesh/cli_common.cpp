#include "cli_common.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <system_error>

namespace radixmesh::cli {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- output flags and JSON

void add_output_flags(CLI::App& command, OutputFlags& flags) {
  command.add_flag("--json", flags.json, "Print the result as one JSON object on stdout instead of text");
  command.add_flag("--progress", flags.progress,
                   "Show the progress line on stderr even when it is not a terminal");
}

void print_json(const nlohmann::json& result) {
  std::string line = result.dump();
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// ---------------------------------------------------------------- exit codes

int exit_code_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return exit_usage;
    case ErrorCode::io: return exit_io;
    case ErrorCode::out_of_memory: return exit_out_of_memory;
    case ErrorCode::unsupported: return exit_unsupported;
    case ErrorCode::device: return exit_device;
    case ErrorCode::internal: return exit_internal;
  }
  return exit_internal;
}

const char* const exit_codes_footer =
    "Exit codes: 0 ok, 1 invalid argument or usage, 2 I/O error, 3 out of memory, 4 unsupported,\n"
    "5 device error, 6 internal error. Errors print one line 'radixmesh: error: ...' on stderr.";

// ---------------------------------------------------------------- flag values

namespace {

std::string all_type_names() {
  std::string names;
  for (KeyType t : all_key_types) names += (names.empty() ? "" : ", ") + std::string(name_of(t));
  return names;
}

std::string trimmed(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

KeyType parse_key_type(const std::string& name, const std::string& flag) {
  if (auto t = key_type_from_name(trimmed(name))) return *t;
  throw_error(ErrorCode::unsupported, "unsupported " + flag + " '" + name + "'",
              "use one of " + all_type_names());
}

Backend parse_backend(const std::string& name) {
  if (name == "auto") return Backend::automatic;
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda" || name == "gpu") return Backend::cuda;
  throw_error(ErrorCode::invalid_argument, "unknown --backend '" + name + "'", "use auto, cpu or cuda");
}

Order parse_order(const std::string& name) {
  if (name == "asc" || name == "ascending") return Order::ascending;
  if (name == "desc" || name == "descending") return Order::descending;
  throw_error(ErrorCode::invalid_argument, "unknown --order '" + name + "'", "use asc or desc");
}

Distribution parse_distribution(const std::string& name) {
  if (auto d = distribution_from_name(name)) return *d;
  throw_error(ErrorCode::invalid_argument, "unknown --dist '" + name + "'",
              "use one of uniform, normal, zipf, sorted, reverse-sorted, nearly-sorted, all-equal, "
              "few-distinct, reduced-entropy");
}

std::vector<int> parse_device_list(const std::string& text) {
  std::vector<int> ids;
  std::string list = trimmed(text);
  if (list.empty()) return ids;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trimmed(item);
    int id = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    require(all_digits(item) && ec == std::errc() && end == item.data() + item.size(),
            "--devices '" + text + "' is not a list of CUDA device ids", "write ids separated by commas, e.g. 0,1,2");
    ids.push_back(id);
  }
  return ids;
}

std::optional<unsigned> parse_cpu_mesh(const std::string& devices_text) {
  const std::string text = trimmed(devices_text);
  if (text.rfind("cpu:", 0) != 0) return std::nullopt;
  const long long n = parse_count(text.substr(4), "--devices cpu:N");
  require(n >= 1 && n <= 4096, "--devices " + text + " asks for " + std::to_string(n) + " CPU devices",
          "use cpu:N with 1 <= N <= 4096");
  return unsigned(n);
}

Context make_mesh_context(const std::string& backend_name, const std::string& devices_text) {
  if (const auto cpu_devices = parse_cpu_mesh(devices_text)) {
    require(parse_backend(backend_name) != Backend::cuda, "--devices " + devices_text + " with --backend cuda",
            "use --devices cpu:N with the CPU backend, or CUDA ids such as 0,1 with --backend cuda");
    return Context::cpu_mesh(*cpu_devices);
  }
  return make_context(backend_name, devices_text);
}

Context make_context(const std::string& backend_name, const std::string& devices_text) {
  const Backend backend = parse_backend(backend_name);
  const std::vector<int> devices = parse_device_list(devices_text);
  if (!devices.empty() && backend != Backend::cpu) {
    CudaDiscovery cuda = discover_cuda();
    if (cuda.topology.devices.empty())
      throw_error(ErrorCode::unsupported, "--devices " + devices_text + " names CUDA devices, but CUDA is unavailable: " + cuda.reason,
                  "drop --devices to run on the CPU, or run on a machine with an NVIDIA GPU and driver");
  }
  return Context::local(devices, backend);
}

namespace {

// Exact integer arithmetic for parse_count: 128 bits hold any product before the range check.
__extension__ typedef unsigned __int128 wide_count;
// 2^56 elements is far beyond any memory, and 2^56 x 8 bytes still fits a size_t.
constexpr wide_count max_count = wide_count(1) << 56;

struct CountParser {
  const std::string& text;
  const std::string& flag;

  [[noreturn]] void fail(const std::string& why) const {
    throw_error(ErrorCode::invalid_argument, flag + " '" + text + "' " + why,
                "write a whole count such as 100000000, 1e8, 2^28, 100M or 256Mi");
  }
  wide_count times(wide_count a, wide_count b) const {
    if (a != 0 && b > max_count / a) fail("is too large");
    return a * b;
  }
  wide_count power(wide_count base, unsigned exponent) const {
    wide_count r = 1;
    for (unsigned i = 0; i < exponent; ++i) {
      if (base <= 1) return base == 0 ? 0 : 1;
      r = times(r, base);
    }
    return r;
  }
  wide_count integer(const std::string& digits) const {
    if (!all_digits(digits)) fail("is not a number");
    wide_count v = 0;
    for (char c : digits) v = times(v, 10) + wide_count(c - '0');
    if (v > max_count) fail("is too large");
    return v;
  }
  // mantissa[.fraction][e[+-]exponent], then an optional K/M/G/T or Ki/Mi/Gi/Ti suffix.
  wide_count decimal(std::string s) const {
    int power_of_two = 0, power_of_ten = 0;
    static const struct { const char* suffix; int two, ten; } suffixes[] = {
        {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0},
        {"K", 0, 3},   {"k", 0, 3},   {"M", 0, 6},   {"G", 0, 9},  {"T", 0, 12}};
    for (const auto& sfx : suffixes) {
      std::string_view suffix = sfx.suffix;
      if (s.size() > suffix.size() && s.ends_with(suffix)) {
        s.resize(s.size() - suffix.size());
        power_of_two = sfx.two;
        power_of_ten = sfx.ten;
        break;
      }
    }
    if (auto e = s.find_first_of("eE"); e != std::string::npos) {
      std::string exponent = s.substr(e + 1);
      bool negative = !exponent.empty() && exponent[0] == '-';
      if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.erase(0, 1);
      if (!all_digits(exponent) || exponent.size() > 3) fail("has a malformed exponent");
      power_of_ten += (negative ? -1 : 1) * std::stoi(exponent);
      s.resize(e);
    }
    std::string fraction;
    if (auto dot = s.find('.'); dot != std::string::npos) {
      fraction = s.substr(dot + 1);
      s.resize(dot);
      if (s.empty() && fraction.empty()) fail("is not a number");
      if (s.empty()) s = "0";
      if (fraction.empty()) fraction = "0";
    }
    if (s.size() + fraction.size() > 30) fail("has too many digits");
    wide_count value = integer(s + fraction);
    power_of_ten -= int(fraction.size());
    value = times(value, power(2, unsigned(power_of_two)));
    if (power_of_ten >= 0) return times(value, power(10, unsigned(power_of_ten)));
    if (-power_of_ten > 30) fail("is not a whole number");
    wide_count divisor = power(10, unsigned(-power_of_ten));
    if (value % divisor != 0) fail("is not a whole number");
    return value / divisor;
  }
};

}  // namespace

std::size_t parse_count(const std::string& text, const std::string& flag) {
  CountParser parser{text, flag};
  std::string s = trimmed(text);
  if (s.empty()) parser.fail("is empty");
  if (s[0] == '-') parser.fail("is negative");
  wide_count value;
  if (auto caret = s.find('^'); caret != std::string::npos) {
    wide_count base = parser.integer(trimmed(s.substr(0, caret)));
    wide_count exponent = parser.integer(trimmed(s.substr(caret + 1)));
    if (exponent > 256) parser.fail("is too large");
    value = parser.power(base, unsigned(exponent));
  } else {
    value = parser.decimal(s);
  }
  if (value > max_count) parser.fail("is too large");
  return std::size_t(value);
}

std::string format_bytes(std::size_t bytes) {
  char text[64];
  if (bytes >= (std::size_t(1) << 30))
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  else if (bytes >= (std::size_t(1) << 20))
    std::snprintf(text, sizeof text, "%.2f MiB", double(bytes) / double(1ull << 20));
  else
    std::snprintf(text, sizeof text, "%zu bytes", bytes);
  return text;
}

// ---------------------------------------------------------------- files

void require_readable_file(const fs::path& path, const std::string& flag) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (!fs::exists(status))
    throw_error(ErrorCode::io, "cannot read " + flag + " '" + path.string() + "': no such file",
                "check the path");
  if (fs::is_directory(status))
    throw_error(ErrorCode::io, "cannot read " + flag + " '" + path.string() + "': it is a directory",
                "name a file");
  if (::access(path.c_str(), R_OK) != 0)
    throw_error(ErrorCode::io, "cannot read " + flag + " '" + path.string() + "': permission denied",
                "check the file's permissions");
}

void StagedOutputs::check_destination(const fs::path& target, std::size_t bytes, const std::string& flag) {
  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  const std::string where = flag + " '" + target.string() + "'";
  if (!fs::is_directory(directory, ec))
    throw_error(ErrorCode::io, "cannot write " + where + ": directory '" + directory.string() + "' does not exist",
                "create the directory or choose another path");
  if (fs::is_directory(target, ec))
    throw_error(ErrorCode::io, "cannot write " + where + ": it is a directory", "name a file");
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw_error(ErrorCode::io, "cannot write " + where + ": directory '" + directory.string() + "' is not writable",
                "check its permissions or choose another path");
  auto space = fs::space(directory, ec);
  if (!ec && space.available < bytes)
    throw_error(ErrorCode::io,
                "cannot write " + where + ": it needs " + format_bytes(bytes) + " but the disk has " +
                    format_bytes(space.available) + " free",
                "free some space or choose another disk");
}

void StagedOutputs::write(const fs::path& target, KeyType type, const void* data, std::size_t count,
                          const std::vector<std::size_t>& shape) {
  ArrayFileWriter& out = staged_.emplace_back(target, type, count, std::nullopt, shape);
  out.write(data, count);
  out.finish();
}

void StagedOutputs::commit() {
  for (ArrayFileWriter& out : staged_) out.publish();
  staged_.clear();
}

// ---------------------------------------------------------------- progress line

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {
constexpr double progress_delay_s = 2.0;  // phases shorter than this print nothing
constexpr auto progress_interval = std::chrono::milliseconds(250);
}  // namespace

ProgressLine::ProgressLine(bool forced, bool shown) : enabled_(shown && (forced || ::isatty(STDERR_FILENO) == 1)) {
  if (enabled_) ticker_ = std::thread([this] { tick_until_stopped(); });
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    // Interrupted (an error is on its way): end the line so the message starts on a fresh one.
    if (shown_) std::fputc('\n', stderr);
    what_.clear();
    shown_ = false;
    stopping_ = true;
  }
  wake_.notify_all();
  ticker_.join();
}

void ProgressLine::phase(const std::string& what) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  end_phase_locked();
  what_ = what;
  started_ = std::chrono::steady_clock::now();
  shown_second_ = -1;
}

void ProgressLine::detail(const std::string& what) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  detail_ = what;
  shown_second_ = -1;  // redrawn at the next tick
}

void ProgressLine::finish() {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  end_phase_locked();
}

void ProgressLine::end_phase_locked() {
  if (shown_) std::fprintf(stderr, "\rradixmesh: %s: done in %.1f s      \n", what_.c_str(), seconds_since(started_));
  std::fflush(stderr);
  what_.clear();
  detail_.clear();
  shown_ = false;
}

void ProgressLine::tick_until_stopped() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, progress_interval);
    if (stopping_ || what_.empty()) continue;
    double elapsed = seconds_since(started_);
    // Redraw only when the shown second changes: a log captured with --progress stays short.
    if (elapsed < progress_delay_s || (shown_ && long(elapsed) == shown_second_)) continue;
    shown_second_ = long(elapsed);
    std::fprintf(stderr, "\rradixmesh: %s%s%s ... %.0f s   ", what_.c_str(), detail_.empty() ? "" : ": ",
                 detail_.c_str(), elapsed);
    std::fflush(stderr);
    shown_ = true;
  }
}

void add_values_flags(CLI::App& command, std::string& values, std::string& values_out, std::string& values_type) {
  CLI::Option* in = command.add_option("--values", values, "Values carried with the keys (4 or 8 bytes each)");
  CLI::Option* out = command.add_option("--values-out", values_out, "Output values");
  in->needs(out);
  out->needs(in);
  command.add_option("--values-type", values_type,
                     "Element type of a raw --values (default: u32 or u64, by the file's size)")
      ->needs(in);
}

ArrayFileInfo inspect_keys_input(const std::string& in, std::optional<KeyType> type) {
  require_readable_file(in, "--in");
  require(type || format_from_path(in) == FileFormat::npy, "--in '" + in + "' is a raw file, so its element type is unknown",
          "pass --type (u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64), or use a .npy file");
  return inspect_array_file(in, type);
}

ArrayFileInfo inspect_values(const std::string& values_path, const std::string& values_type,
                             const std::string& keys_path, std::size_t key_count, const std::string& purpose) {
  require_readable_file(values_path, "--values");
  std::optional<KeyType> type;
  if (!values_type.empty()) type = parse_key_type(values_type, "--values-type");
  if (format_from_path(values_path) == FileFormat::raw && !type) {
    // A raw file has no dtype: its width is whatever makes one value per key (4 or 8 bytes).
    const std::size_t bytes = std::filesystem::file_size(values_path);
    if (key_count == 0 ? bytes == 0 : bytes == key_count * 4) type = KeyType::u32;
    else if (bytes == key_count * 8) type = KeyType::u64;
    else
      throw_error(ErrorCode::invalid_argument,
                  "--values '" + values_path + "' has " + std::to_string(bytes) +
                      " bytes, not 4 or 8 bytes for each of the " + std::to_string(key_count) + " keys in --in",
                  "give exactly one 4- or 8-byte value per key");
  }
  ArrayFileInfo info = inspect_array_file(values_path, type);
  require(info.count == key_count,
          "--values '" + values_path + "' holds " + std::to_string(info.count) + " values but --in '" + keys_path +
              "' holds " + std::to_string(key_count) + " keys",
          "give exactly one value per key");
  if (size_of(info.type) != 4 && size_of(info.type) != 8)
    throw_error(ErrorCode::unsupported,
                "--values '" + values_path + "' has " + std::string(name_of(info.type)) + " elements; " + purpose +
                    " carries 4- or 8-byte values",
                "convert the values to a 4- or 8-byte type (e.g. u32 or i64), or " + purpose + " indices and gather");
  return info;
}

}  // namespace radixmesh::cli
