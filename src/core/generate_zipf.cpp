#include "generate_zipf.hpp"

#include <cmath>

namespace radixmesh::detail {
namespace {
// log1p(x) / x, continuous at 0 (series below 1e-8, where log1p(x)/x loses precision).
double log1p_over_x(double x) {
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
// expm1(x) / x, continuous at 0.
double expm1_over_x(double x) {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}
}  // namespace

ZipfSampler::ZipfSampler(double universe, double exponent) : universe_(universe), exponent_(exponent) {
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_universe_ = h_integral(universe_ + 0.5);
  squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  double log_x = std::log(x);
  return expm1_over_x((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) t = -1.0;  // rounding can push t just below -1, where log1p is undefined
  return std::exp(log1p_over_x(t) * x);
}

std::uint64_t ZipfSampler::sample(RandomStream& stream) const {
  for (;;) {
    // u uniform in (H(1.5) - 1, H(N + 0.5)]: the area under the hat from x = 0.5 (section 4).
    double u = h_integral_universe_ + stream.next_unit() * (h_integral_x1_ - h_integral_universe_);
    double x = h_integral_inverse(u);
    double rounded = std::floor(x + 0.5);
    if (rounded < 1.0) rounded = 1.0;
    if (rounded > universe_) rounded = universe_;
    if (rounded - x <= squeeze_ || u >= h_integral(rounded + 0.5) - h(rounded)) {
      // universe_ may be 2^64, which does not fit: the top rank then saturates to 2^64 - 1.
      return rounded >= 0x1p64 ? ~std::uint64_t(0) : std::uint64_t(rounded);
    }
  }
}

}  // namespace radixmesh::detail
