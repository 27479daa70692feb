// rxm::generate: validates the options once, then fills fixed-size chunks of the output on host
// threads, each chunk from its own counter-based stream (generate_rng.hpp), so the bytes depend
// only on (type, n, options), never on the thread count.
#include "radixmesh/generate.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "generate_domain.hpp"
#include "generate_rng.hpp"
#include "generate_specials.hpp"
#include "generate_zipf.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh {

namespace {
struct DistributionName {
  Distribution distribution;
  std::string_view name;
};
constexpr DistributionName distribution_names[] = {
    {Distribution::uniform, "uniform"},
    {Distribution::normal, "normal"},
    {Distribution::zipf, "zipf"},
    {Distribution::sorted, "sorted"},
    {Distribution::reverse_sorted, "reverse"},
    {Distribution::nearly_sorted, "nearly-sorted"},
    {Distribution::all_equal, "all-equal"},
    {Distribution::few_distinct, "few-distinct"},
    {Distribution::reduced_entropy, "reduced-entropy"},
};
}  // namespace

std::string_view name_of(Distribution d) {
  for (const auto& entry : distribution_names)
    if (entry.distribution == d) return entry.name;
  return "?";
}

std::optional<Distribution> distribution_from_name(std::string_view name) {
  std::string canonical(name);
  for (char& c : canonical) c = c == '_' ? '-' : char(std::tolower(static_cast<unsigned char>(c)));
  if (canonical == "reverse-sorted") canonical = "reverse";
  for (const auto& entry : distribution_names)
    if (canonical == entry.name) return entry.distribution;
  return std::nullopt;
}

namespace {
using detail::CellEdges;
using detail::RandomStream;
using detail::RankScramble;
using detail::StreamPurpose;
using detail::uint128_t;
using detail::ValueDomain;
using detail::ZipfSampler;

constexpr std::size_t chunk_elements = std::size_t(1) << 16;
// few_distinct values are tabulated up to this count; above it each is computed when drawn.
constexpr std::uint64_t max_tabulated_distinct = std::uint64_t(1) << 20;

template <class T> constexpr bool is_float_key_v = key_traits<T>::is_float;
template <class T> constexpr int width_of = int(sizeof(T) * 8);

template <class T> T key_from_encoding(std::uint64_t encoded) { return decode_key<T>(key_bits_t<T>(encoded)); }

template <class T> T float_key_from_double(double d) {
  if constexpr (std::is_same_v<T, double>) return d;
  else if constexpr (std::is_same_v<T, float>) return float(d);
  else if constexpr (std::is_same_v<T, half_t>) return half_from_float(float(d));
  else return bfloat16_from_float(float(d));
}

// Rounded to nearest and clamped to T's range (the double bounds 2^(w-1), 2^w are exact).
template <class T> T integer_key_from_double(double d) {
  double rounded = std::nearbyint(d);
  constexpr double above_max = std::is_signed_v<T> ? std::ldexp(1.0, width_of<T> - 1) : std::ldexp(1.0, width_of<T>);
  if (rounded >= above_max) return std::numeric_limits<T>::max();
  if (rounded <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  return T(rounded);
}

std::string number(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

std::string where(KeyType type, Distribution d) {
  return "generate(" + std::string(name_of(type)) + ", " + std::string(name_of(d)) + ")";
}

// Validates the options for T and holds what every chunk shares: the domain, samplers, tables.
template <class T> class Generator {
 public:
  Generator(const GenerateOptions& options, std::size_t n) : options_(options), n_(n) {
    validate_common();
    domain_ = make_domain();
    switch (options.distribution) {
      case Distribution::uniform:
      case Distribution::sorted:
      case Distribution::reverse_sorted: break;
      case Distribution::normal: validate_normal(); break;
      case Distribution::zipf: prepare_zipf(); break;
      case Distribution::nearly_sorted: validate_swaps(); break;
      case Distribution::all_equal: {
        RandomStream params(options.seed, StreamPurpose::parameters, 0);
        constant_ = key_from_encoding<T>(domain_.draw(params));
        break;
      }
      case Distribution::few_distinct: prepare_few_distinct(); break;
      case Distribution::reduced_entropy: prepare_reduced_entropy(); break;
    }
  }

  void fill_values(T* out, std::size_t chunk) const {
    std::size_t begin = chunk * chunk_elements, end = std::min(n_, begin + chunk_elements);
    RandomStream stream(options_.seed, StreamPurpose::values, chunk);
    switch (options_.distribution) {
      case Distribution::uniform: fill_uniform(out, begin, end, stream); break;
      case Distribution::normal: fill_normal(out, begin, end, stream); break;
      case Distribution::zipf:
        for (std::size_t i = begin; i < end; ++i)
          out[i] = key_from_encoding<T>(domain_.at((*scramble_)(zipf_->sample(stream) - 1)));
        break;
      case Distribution::sorted:
      case Distribution::nearly_sorted:
        fill_sorted_cells(begin, end, stream, [&](std::size_t cell, T key) { out[cell] = key; });
        break;
      case Distribution::reverse_sorted:
        // Chunk [begin, end) holds cells [n - end, n - begin) of the ascending order, mirrored.
        fill_sorted_cells(n_ - end, n_ - begin, stream, [&](std::size_t cell, T key) { out[n_ - 1 - cell] = key; });
        break;
      case Distribution::all_equal: std::fill(out + begin, out + end, constant_); break;
      case Distribution::few_distinct:
        for (std::size_t i = begin; i < end; ++i) {
          std::uint64_t j = stream.next_below(options_.distinct);
          out[i] = distinct_table_.empty() ? distinct_value(j) : distinct_table_[j];
        }
        break;
      case Distribution::reduced_entropy:
        for (std::size_t i = begin; i < end; ++i)
          out[i] = key_from_encoding<T>(entropy_high_bits_ | (stream.next() & entropy_mask_));
        break;
    }
  }

  // nearly_sorted: after all chunks are sorted, swap random pairs from one stream (serial, so
  // the result is the same for any thread count; 10^6 swaps take milliseconds).
  void apply_swaps(T* out) const {
    if (options_.distribution != Distribution::nearly_sorted || n_ < 2) return;
    RandomStream stream(options_.seed, StreamPurpose::swaps, 0);
    auto swaps = std::uint64_t(std::llround(options_.swap_fraction * double(n_) / 2.0));
    for (std::uint64_t s = 0; s < swaps; ++s) {
      std::uint64_t a = stream.next_below(n_), b = stream.next_below(n_);
      std::swap(out[a], out[b]);
    }
  }

  bool has_specials() const { return options_.special_fraction > 0; }

  // Replaces each element by a special value with probability special_fraction; its own stream,
  // so the other elements are the same as without specials.
  void mix_specials(T* out, std::size_t chunk) const {
    if constexpr (is_float_key_v<T>) {
      std::size_t begin = chunk * chunk_elements, end = std::min(n_, begin + chunk_elements);
      RandomStream stream(options_.seed, StreamPurpose::specials, chunk);
      for (std::size_t i = begin; i < end; ++i)
        if (stream.next_unit() < options_.special_fraction) out[i] = detail::draw_special_float<T>(stream);
    } else {
      (void)out;
      (void)chunk;
    }
  }

 private:
  std::string context() const { return where(key_type_v<T>, options_.distribution); }
  [[noreturn]] void fail(const std::string& problem, const std::string& fix) const {
    throw_error(ErrorCode::invalid_argument, context() + ": " + problem, fix);
  }

  void validate_common() const {
    const double f = options_.special_fraction;
    if (!(f >= 0.0 && f <= 1.0))
      fail("special_fraction = " + number(f) + " is not a fraction", "set special_fraction in [0, 1]");
    if (!is_float_key_v<T> && f > 0.0)
      fail("special_fraction = " + number(f) + " asks for NaN/inf/denormals, which integers do not have",
           "set special_fraction = 0 for integer types, or generate a float type");
  }

  ValueDomain make_domain() const {
    if constexpr (!is_float_key_v<T>) {
      return {0, uint128_t(1) << width_of<T>};
    } else {
      constexpr int mantissa_bits = key_traits<T>::mantissa_bits;
      const uint128_t finite_count = (uint128_t(1) << width_of<T>) - (uint128_t(1) << (mantissa_bits + 1));
      // Normal draws values, not encodings, and float_full_range asks for every finite value.
      if (options_.float_full_range || options_.distribution == Distribution::normal) return {1, finite_count};
      T lo = float_key_from_double<T>(options_.lo), hi = float_key_from_double<T>(options_.hi);
      std::uint64_t lo_encoded = encode_key(lo), hi_encoded = encode_key(hi);
      const std::string range = "[lo, hi) = [" + number(options_.lo) + ", " + number(options_.hi) + ")";
      auto finite = [&](std::uint64_t e) { return e >= 1 && e <= std::uint64_t(finite_count); };
      if (!finite(lo_encoded) || !finite(hi_encoded))
        fail(range + " is not finite in " + std::string(name_of(key_type_v<T>)),
             "give finite lo and hi within the type's range, or set float_full_range = true");
      if (!(lo_encoded < hi_encoded))
        fail(range + " is empty once rounded to " + std::string(name_of(key_type_v<T>)),
             "give lo < hi (at least one representable value apart)");
      return {lo_encoded, hi_encoded - lo_encoded};
    }
  }

  void validate_normal() const {
    if (!std::isfinite(options_.mean)) fail("mean = " + number(options_.mean) + " is not finite", "give a finite mean");
    if (!(std::isfinite(options_.stddev) && options_.stddev >= 0.0))
      fail("stddev = " + number(options_.stddev) + " is not a finite non-negative number", "give stddev >= 0");
  }

  void validate_swaps() const {
    if (!(options_.swap_fraction >= 0.0 && options_.swap_fraction <= 1.0))
      fail("swap_fraction = " + number(options_.swap_fraction) + " is not a fraction", "set swap_fraction in [0, 1]");
  }

  void prepare_zipf() {
    if (!(std::isfinite(options_.zipf_s) && options_.zipf_s > 0.0))
      fail("zipf_s = " + number(options_.zipf_s) + " is not a positive exponent",
           "set zipf_s > 0 (1.0 is the classic Zipf law; larger is more skewed)");
    if (options_.zipf_universe == 0) fail("zipf_universe = 0 leaves no ranks to draw", "set zipf_universe >= 1");
    uint128_t universe = std::min<uint128_t>(options_.zipf_universe, domain_.span);
    zipf_.emplace(double(universe), options_.zipf_s);
    scramble_.emplace(domain_.span);
  }

  void prepare_few_distinct() {
    if (options_.distinct == 0) fail("distinct = 0 leaves no values to draw", "set distinct >= 1");
    if (uint128_t(options_.distinct) > domain_.span)
      fail("distinct = " + std::to_string(options_.distinct) + " is more than the " +
               std::to_string(std::uint64_t(domain_.span)) + " values the type (or [lo, hi)) holds",
           "ask for fewer distinct values, a wider type, or a wider [lo, hi)");
    if (options_.distinct <= max_tabulated_distinct) {
      distinct_table_.resize(options_.distinct);
      for (std::uint64_t j = 0; j < options_.distinct; ++j) distinct_table_[j] = distinct_value(j);
    }
  }

  // The j-th of `distinct` values: a random key in the j-th of `distinct` equal cells of the
  // domain, so the values are different by construction and spread over the whole range.
  T distinct_value(std::uint64_t j) const {
    const std::uint64_t count = options_.distinct;
    uint128_t first = uint128_t(j) * domain_.span / count, next = uint128_t(j + 1) * domain_.span / count;
    RandomStream stream(options_.seed, StreamPurpose::parameters, j + 1);
    return key_from_encoding<T>(domain_.at(first + stream.next_below_wide(next - first)));
  }

  // All keys share one aligned block of 2^entropy_bits encodings inside the domain: the high
  // bits of the encoding are constant, the low entropy_bits are uniform.
  void prepare_reduced_entropy() {
    const int bits = options_.entropy_bits;
    if (bits < 0 || bits > width_of<T>)
      fail("entropy_bits = " + std::to_string(bits) + " is outside 0.." + std::to_string(width_of<T>),
           "set entropy_bits between 0 (all equal) and " + std::to_string(width_of<T>) + " (every bit random)");
    const uint128_t block = uint128_t(1) << bits;
    const uint128_t first = (uint128_t(domain_.base) + block - 1) / block * block;
    const uint128_t end = uint128_t(domain_.base) + domain_.span;
    const uint128_t blocks = end >= first ? (end - first) / block : 0;
    if (blocks == 0)
      fail("entropy_bits = " + std::to_string(bits) + ": no block of 2^" + std::to_string(bits) + " keys lies inside the value range without NaN or inf",
           "use fewer entropy_bits, a wider [lo, hi), or float_full_range = true");
    RandomStream params(options_.seed, StreamPurpose::parameters, 0);
    entropy_high_bits_ = std::uint64_t(first + block * params.next_below_wide(blocks));
    entropy_mask_ = bits == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
  }

  void fill_uniform(T* out, std::size_t begin, std::size_t end, RandomStream& stream) const {
    if constexpr (!is_float_key_v<T>) {
      for (std::size_t i = begin; i < end; ++i)
        out[i] = from_bits<T>(key_bits_t<T>(stream.next() >> (64 - width_of<T>)));
    } else if (options_.float_full_range) {
      for (std::size_t i = begin; i < end; ++i) out[i] = key_from_encoding<T>(domain_.draw(stream));
    } else {
      // Uniform in value. lo(1-u) + hi u never overflows (unlike lo + u(hi-lo)); rounding to T
      // may land on hi or below lo, so clamp to the domain's encodings.
      const std::uint64_t first = domain_.base, last = domain_.at(domain_.span - 1);
      for (std::size_t i = begin; i < end; ++i) {
        double u = stream.next_unit();
        std::uint64_t e = encode_key(float_key_from_double<T>(options_.lo * (1.0 - u) + options_.hi * u));
        out[i] = key_from_encoding<T>(std::clamp(e, first, last));
      }
    }
  }

  // Box-Muller (G. Box and M. Muller, 1958): two normal deviates per two uniforms.
  void fill_normal(T* out, std::size_t begin, std::size_t end, RandomStream& stream) const {
    auto store = [&](std::size_t i, double z) {
      double value = options_.mean + options_.stddev * z;
      if constexpr (is_float_key_v<T>) out[i] = float_key_from_double<T>(value);
      else out[i] = integer_key_from_double<T>(value);
    };
    constexpr double two_pi = 6.283185307179586476925286766559;
    for (std::size_t i = begin; i < end; i += 2) {
      double radius = std::sqrt(-2.0 * std::log(stream.next_unit_open_zero()));
      double angle = two_pi * stream.next_unit();
      store(i, radius * std::cos(angle));
      if (i + 1 < end) store(i + 1, radius * std::sin(angle));
    }
  }

  // Cell c of n equal cells tiling the domain gets one random key inside it, so the keys are
  // non-decreasing in c, spread over the whole range, and each cell is computed independently.
  template <class Store>
  void fill_sorted_cells(std::size_t first_cell, std::size_t end_cell, RandomStream& stream, Store&& store) const {
    CellEdges edges(domain_.span, n_, first_cell);
    for (std::size_t cell = first_cell; cell < end_cell; ++cell) {
      uint128_t lower = edges.current();
      edges.advance();
      uint128_t width = edges.current() - lower;
      uint128_t offset = width > 1 ? lower + stream.next_below_wide(width) : lower;
      store(cell, key_from_encoding<T>(domain_.at(offset)));
    }
  }

  const GenerateOptions& options_;
  std::size_t n_;
  ValueDomain domain_;
  T constant_{};
  std::optional<ZipfSampler> zipf_;
  std::optional<RankScramble> scramble_;
  std::vector<T> distinct_table_;
  std::uint64_t entropy_high_bits_ = 0, entropy_mask_ = 0;
};

// Runs task(chunk) for every chunk on up to `threads` threads; chunks are claimed dynamically,
// which is safe because a chunk's contents do not depend on who fills it.
template <class Task> void for_each_chunk(std::size_t chunks, unsigned threads, const Task& task) {
  unsigned workers = unsigned(std::min<std::size_t>(threads, chunks));
  if (workers <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) task(c);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) task(c);
  };
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
}

}  // namespace

void generate(KeyType type, void* out, std::size_t n, const GenerateOptions& options) {
  require(out != nullptr || n == 0, "generate: the output pointer is null but n = " + std::to_string(n),
          "pass a buffer of n elements of the key type");
  bool known = std::any_of(std::begin(distribution_names), std::end(distribution_names),
                           [&](const auto& e) { return e.distribution == options.distribution; });
  require(known, "generate: distribution " + std::to_string(int(options.distribution)) + " is not one radixmesh knows",
          "use a value of rxm::Distribution");
  unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  visit_key_type(type, [&](auto tag) {
    using T = decltype(tag);
    const Generator<T> generator(options, n);  // validates before anything is written
    T* keys = static_cast<T*>(out);
    const std::size_t chunks = (n + chunk_elements - 1) / chunk_elements;
    for_each_chunk(chunks, threads, [&](std::size_t c) { generator.fill_values(keys, c); });
    generator.apply_swaps(keys);
    if (generator.has_specials())
      for_each_chunk(chunks, threads, [&](std::size_t c) { generator.mix_specials(keys, c); });
  });
}

}  // namespace radixmesh
