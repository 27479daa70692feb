#include "cuda/sort/lsd_engine.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/multisplit/multisplit_digit.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/engine.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

struct Digit {
  int shift, bits;
};

// [begin_bit, end_bit) cut into the fewest digits of at most max_bits, as even as possible
// (24 bits at 8: 8+8+8; 20 bits at 8: 7+7+6), least significant first.
std::vector<Digit> digits_of(const EncodedSortShape& s, int max_bits) {
  const int total = s.end_bit - s.begin_bit;
  const int passes = (total + max_bits - 1) / max_bits;
  std::vector<Digit> digits;
  for (int p = 0, shift = s.begin_bit; p < passes; ++p) {
    const int bits = total / passes + (p < total % passes ? 1 : 0);
    digits.push_back({shift, bits});
    shift += bits;
  }
  return digits;
}

// One multisplit pass with the widths as template arguments (the instantiation list lives in
// multisplit_digit.cu; this only picks from it). Always our own multisplit: with `automatic`, wide
// digits would run CUB's pass and this engine would no longer be the one compared with CUB.
void multisplit_pass(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                     void* values_out, const EncodedSortShape& s, Digit d, cudaStream_t stream) {
  auto run = [&](auto key_bits_tag, auto value_bytes_tag) {
    constexpr int KB = decltype(key_bits_tag)::value, VB = decltype(value_bytes_tag)::value;
    using bits = cuda::digit_key_t<KB>;
    RXM_CUDA_CHECK((cuda::multisplit_digit<KB, VB>(temp, temp_bytes, static_cast<const bits*>(keys_in),
                                                    static_cast<bits*>(keys_out), values_in, values_out, s.n, d.shift,
                                                    d.bits, nullptr, stream, cuda::DigitEngine::own)));
  };
  auto with_values = [&](auto key_bits_tag) {
    switch (s.value_bytes) {
      case 0: return run(key_bits_tag, std::integral_constant<int, 0>{});
      case 4: return run(key_bits_tag, std::integral_constant<int, 4>{});
      default: return run(key_bits_tag, std::integral_constant<int, 8>{});
    }
  };
  switch (s.key_bytes) {
    case 1: return with_values(std::integral_constant<int, 8>{});
    case 2: return with_values(std::integral_constant<int, 16>{});
    case 4: return with_values(std::integral_constant<int, 32>{});
    default: return with_values(std::integral_constant<int, 64>{});
  }
}

void require_lsd_size(const EncodedSortShape& s) {
  if (s.n > lsd_max_items)
    throw_error(ErrorCode::unsupported,
                "the multisplit LSD sort engine takes at most " + std::to_string(lsd_max_items) + " keys, not " +
                    std::to_string(s.n),
                "use SortEngine::automatic or SortEngine::cub_onesweep for larger arrays");
}

// Temp for the widest pass: every pass of one sort uses the same multisplit temp.
std::size_t multisplit_temp_bytes(const EncodedSortShape& s, const std::vector<Digit>& digits, cudaStream_t stream) {
  std::size_t most = 0;
  for (Digit d : digits) {
    std::size_t bytes = 0;
    multisplit_pass(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, s, d, stream);
    most = std::max(most, bytes);
  }
  return most;
}

}  // namespace

void lsd_sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& b, const EncodedSortShape& s,
                            cudaStream_t stream, int digit_bits) {
  require_lsd_size(s);
  const auto digits = digits_of(s, digit_bits);
  const std::size_t pass_bytes = multisplit_temp_bytes(s, digits, stream);
  if (!temp) {
    temp_bytes = std::max<std::size_t>(pass_bytes, 1);
    return;
  }
  for (Digit d : digits) {
    const int from = b.selector, to = b.selector ^ 1;
    std::size_t bytes = pass_bytes;
    multisplit_pass(temp, bytes, b.keys[from], b.keys[to], b.values[from], b.values[to], s, d, stream);
    b.selector = to;
  }
}

void lsd_sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                   void* values_out, const EncodedSortShape& s, cudaStream_t stream, int digit_bits) {
  require_lsd_size(s);
  const auto digits = digits_of(s, digit_bits);
  TempCarver carver(temp);
  void* scratch_keys = carver.take(s.n * std::size_t(s.key_bytes));
  void* scratch_values = carver.take(s.n * std::size_t(s.value_bytes));
  std::size_t pass_bytes = multisplit_temp_bytes(s, digits, stream);
  void* pass_temp = carver.take(pass_bytes);
  if (!temp) {
    temp_bytes = carver.used();
    return;
  }
  // Ping-pong between the output and the scratch so that the last pass lands in the output:
  // an odd number of passes starts by writing the output, an even number the scratch.
  const void* keys_from = keys_in;
  const void* values_from = values_in;
  bool to_output = digits.size() % 2 == 1;
  for (Digit d : digits) {
    void* keys_to = to_output ? keys_out : scratch_keys;
    void* values_to = to_output ? values_out : scratch_values;
    std::size_t bytes = pass_bytes;
    multisplit_pass(pass_temp, bytes, keys_from, keys_to, values_from, values_to, s, d, stream);
    keys_from = keys_to;
    values_from = values_to;
    to_output = !to_output;
  }
}

}  // namespace radixmesh::detail
