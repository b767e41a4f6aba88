// The tail integrals K_j(w) = int_0^inf v^j exp(-w v - v^2/2) dv (continuous/tail_integrals.h)
// and profile_moments' use of them for a centre more than 4 s outside the interval
// (continuous/profile_moments.h), each against long-double adaptive quadrature written out here
// (continuous_reference.h). K_0..K_J, J = 4..7 (every J the kernels use), are held to 1e-15
// relative at 91 points from w = 4 to 40, the ends of the fit included (the fit cut after degree
// 17 instead of 21 fails at w = 4 for every J). profile_moments
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
  const auto got = sparcon::detail::tail_integrals<J>(w);
  for (int j = 0; j <= J; ++j) {
    const LD want = tail_integral(j, w);
    EXPECT_LE(std::fabs(got[j] - want), 1e-15L * want) << "K_" << j << " (J = " << J << ") at w = " << w;
  }
}

TEST(TailIntegrals, WithinOneUlpOrSoOfQuadratureFromFourToForty) {
  for (int i = 0; i <= 90; ++i) {
    const double w = 4 + 0.4 * i;
    check_tail_integrals<4>(w);
    check_tail_integrals<5>(w);
    check_tail_integrals<6>(w);
    check_tail_integrals<7>(w);
  }
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
