// The tail integrals K_j(w) = int_0^inf v^j exp(-w v - v^2/2) dv (continuous/tail_integrals.h)
// and profile_moments' use of them for a centre more than 4 s outside the interval
// (continuous/profile_moments.h), each against long-double adaptive quadrature written out here
// (continuous_reference.h). K_j at the depth tail_fraction_depth(w) gives is held to 1e-15
// relative at every w from 4 to 40, on both sides of every band edge of the depth table (a band
// given fewer terms than it needs fails: 4 terms fewer at w = 4 are 2.6e-15 off). profile_moments
// is held to 6e-15 relative, m = 0..3, k = 1 and 2, R = 1..16 s, the centre 4.01-30 s above or
// below, on the ray's [0, R] and on 1D's [-R, R], with and without the far end's part: 5.2e-15
// where that part is largest (R = s, 4.01 s out, k = 2, m = 3: it is e^-4.5 of the whole and
// subtracted), below 1.6e-15 elsewhere. The closed form that took k = 1 there before was up to
// 2e-8 off (R = s, 7 s out).
#include <gtest/gtest.h>

#include <cmath>

#include "continuous/profile_moments.h"
#include "continuous/tail_integrals.h"
#include "continuous_reference.h"

namespace {

namespace cref = sparcon_test::cref;
using LD = long double;

LD tail_integral(int j, LD w) {
  cref::QuadOptions opt;
  opt.rel_tol = 1e-18L;
  // v^j e^(-w v) peaks at j / w; past v = 20 the integrand is below e^-80 of the integral.
  return cref::integrate([&](LD v) { return std::pow(v, static_cast<LD>(j)) * std::exp(-w * v - v * v / 2); }, 0,
                         20, {static_cast<LD>(j) / w, 1, 2, 5}, opt);
}

template <int J>
void check_tail_integrals(double w) {
  const auto got = sparcon::detail::tail_integrals<J>(w, sparcon::detail::tail_fraction_depth(w));
  for (int j = 0; j <= J; ++j) {
    const LD want = tail_integral(j, w);
    EXPECT_LE(std::fabs(got[j] - want), 1e-15L * want) << "K_" << j << " (J = " << J << ") at w = " << w;
  }
}

TEST(TailIntegrals, WithinOneUlpOrSoOfQuadratureFromFourToForty) {
  for (const double w : {4.0, 4.2, 4.49, 4.5, 4.99, 5.0, 5.5, 5.99, 6.0, 6.99, 7.0, 7.99, 8.0, 9.0, 9.99, 10.0,
                         11.99, 12.0, 15.99, 16.0, 19.99, 20.0, 25.0, 29.99, 30.0, 35.0, 40.0}) {
    check_tail_integrals<5>(w);
    check_tail_integrals<7>(w);
  }
}

TEST(TailIntegrals, TheDepthFallsWithW) {
  int previous = sparcon::detail::tail_fraction_depth(4);
  for (const double w : {4.5, 5.0, 6.0, 8.0, 12.0, 20.0, 30.0, 1e9}) {
    const int depth = sparcon::detail::tail_fraction_depth(w);
    EXPECT_LE(depth, previous) << "w = " << w;
    previous = depth;
  }
  EXPECT_EQ(sparcon::detail::tail_fraction_depth(std::nan("")), sparcon::detail::tail_fraction_depth(4));
}

// P_m = int_lo^hi (1 - u^2/R^2)^k u^m N(u; d, s^2) du by quadrature, breakpoints towards the end
// nearest to d, where the integrand decays on the scale s^2 / |d - end|.
LD profile_moment(int k, int m, LD R, LD lo, LD hi, LD d, LD s) {
  cref::QuadOptions opt;
  opt.rel_tol = 1e-18L;
  const LD end = d > hi ? hi : lo, decay = s * s / std::fabs(d - end), inward = d > hi ? -1 : 1;
  std::vector<LD> breaks;
  for (LD x = decay / 4; x < hi - lo; x *= 2) breaks.push_back(end + inward * x);
  return cref::integrate(
      [&](LD u) {
        const LD z = (u - d) / s, base = 1 - u * u / (R * R);
        return std::pow(base, static_cast<LD>(k)) * std::pow(u, static_cast<LD>(m)) * std::exp(-z * z / 2) /
               (s * std::sqrt(2 * cref::kPi));
      },
      lo, hi, breaks, opt);
}

TEST(ProfileMomentsBeyondTheInterval, WithinAFewUlpOfQuadrature) {
  const double s = 1;
  for (const int k : {1, 2}) {
    for (const double R : {1.0, 1.5, 2.0, 4.0, 8.0, 16.0}) {
      for (const bool ray : {true, false}) {  // [0, R] (2D ray) or [-R, R] (1D support)
        const double lo = ray ? 0 : -R, hi = R;
        for (const double out : {4.01, 4.5, 5.0, 7.0, 10.0, 15.0, 30.0}) {
          for (const double d : {hi + out * s, lo - out * s}) {
            const auto got = sparcon::detail::profile_moments(k, R, lo, hi, d, s);
            for (int m = 0; m <= 3; ++m) {
              const LD want = profile_moment(k, m, R, lo, hi, d, s);
              EXPECT_LE(std::fabs(got[m] - want), 6e-15L * std::fabs(want) + 1e-300L)
                  << "k " << k << " m " << m << " [" << lo << ", " << hi << "] R " << R << " d " << d;
            }
          }
        }
      }
    }
  }
}

}  // namespace
