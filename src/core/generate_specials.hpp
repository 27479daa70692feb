// generate_specials.hpp — the float values that break naive sorts: NaNs of both signs and
// several payloads, +-inf, +-0 and denormals.
#pragma once
#include <type_traits>

#include "generate_rng.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::detail {

// One special value of float key type T, chosen uniformly among the kinds below.
template <class T> T draw_special_float(RandomStream& stream) {
  using U = key_bits_t<T>;
  constexpr int mantissa_bits = key_traits<T>::mantissa_bits;
  constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  constexpr U mantissa = U((U(1) << mantissa_bits) - 1);
  constexpr U infinity = U(U(~sign) & U(~mantissa));  // exponent all ones
  constexpr U quiet = U(U(1) << (mantissa_bits - 1));
  constexpr int kinds = 12;
  std::uint64_t r = stream.next();
  U random_mantissa = U(U(r >> 8) & mantissa);
  if (random_mantissa == 0) random_mantissa = 1;  // keeps NaN a NaN and a denormal nonzero
  U random_sign = (r & 0x10) ? sign : U(0);
  U bits = 0;
  switch ((r & 0xff) % kinds) {  // low byte: which kind; higher bits: payload and sign
    case 0: bits = U(infinity | quiet); break;                          // +qNaN (the default NaN)
    case 1: bits = U(sign | infinity | quiet); break;                   // -qNaN
    case 2: bits = U(infinity | 1); break;                              // +sNaN, smallest payload
    case 3: bits = U(sign | infinity | mantissa); break;                // -NaN, largest payload
    case 4: bits = U(random_sign | infinity | random_mantissa); break;  // NaN, random payload
    case 5: bits = infinity; break;                                     // +inf
    case 6: bits = U(sign | infinity); break;                           // -inf
    case 7: bits = 0; break;                                            // +0
    case 8: bits = sign; break;                                         // -0
    case 9: bits = 1; break;                                            // smallest denormal
    case 10: bits = U(sign | mantissa); break;                          // -largest denormal
    default: bits = U(random_sign | random_mantissa); break;            // random denormal
  }
  return from_bits<T>(bits);
}

}  // namespace radixmesh::detail
