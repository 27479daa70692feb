// generate_zipf.hpp — Zipf(s) ranks 1..N in O(1) expected time per sample, any s > 0.
//
// Rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996, section 4 and the Zipf example):
// invert the integral H of the hat h(x) = x^-s, accept k = round(x) when the drawn point falls
// under the probability of k. The acceptance rate is above 0.9 for every s, so no table of N
// entries is needed and N may be as large as 2^64. Same formulation as Apache Commons RNG's
// RejectionInversionZipfSampler, whose helpers keep s = 1 (where H is a logarithm) exact.
#pragma once
#include <cstdint>

#include "generate_rng.hpp"

namespace radixmesh::detail {

class ZipfSampler {
 public:
  ZipfSampler(double universe, double exponent);
  // A rank in [1, universe].
  std::uint64_t sample(RandomStream& stream) const;

 private:
  double h(double x) const;                   // the hat: x^-s
  double h_integral(double x) const;          // (x^(1-s) - 1) / (1 - s), log x at s = 1
  double h_integral_inverse(double x) const;

  double universe_;
  double exponent_;
  double h_integral_x1_;        // H(1.5) - 1
  double h_integral_universe_;  // H(N + 0.5)
  double squeeze_;              // 2 - H^-1(H(2.5) - h(2)): k - x below this is always accepted
};

}  // namespace radixmesh::detail
