// The integrals of a polynomial against a Gaussian seen from beyond its end, which profile_moments
// (scalar) and the 2D ray and chord kernels (profile_moments-inl.h, on vectors) share:
//
//   K_j(w) = int_0^inf v^j exp(-w v - v^2 / 2) dv,   j = 0..J,   w >= 4.
//
// (With v the distance inward from the end of [lo, hi] in units of s and w the distance of the
// Gaussian's centre behind that end, int profile(u) u^m N(u; d, s^2) du over the half-line is
// phi(w) sum_j g_j K_j(w), g_j the coefficients of the polynomial profile(u) u^m in v.)
//
// Integrating (w + v) v^j e^(-w v - v^2/2) by parts gives K_(j+1) = j K_(j-1) - w K_j (j >= 1)
// and K_1 = 1 - w K_0. Upwards this recurrence loses about 2 log10(w) digits a step; downwards,
// K_(j-1) = (K_(j+1) + w K_j) / j adds positive terms only and loses nothing. It starts from
// K_J = 1 and the ratio r_J = K_(J+1) / K_J, and its values are then scaled so that
// K_1 = 1 - w K_0 holds.
//
// The ratio is r_J = (J + 1) / w F_J(w), where F_J (between 0.71 and 1, tending to 1 as w grows)
// is a polynomial of degree 21 in y = (2 t - 13/22) / (9/22), t = 4 / (4 + w) in [1/11, 1/2]: its
// Chebyshev series cut after degree 21 in 60-digit arithmetic (scripts/fit_tail_ratios.py, which
// prints the table below), within 1.9e-16 relative of F_J evaluated in double as here (Horner's
// rule on the even and odd parts in y^2, two independent chains), checked at 4001 points. The
// coefficients' magnitudes add up to 1.13 at most, so the sum is well conditioned. Every K_j is
// then within 6.1e-16 relative of its 50-digit value (361 points from w = 4 to 40; the test,
// tests/continuous/tail_integrals_test.cc, holds it to 1e-15 against quadrature).
// (The continued fraction r_J = (J+1) / (w + (J+2) / (w + (J+3) / (w + ...))), which this fit
// replaced, took 6-28 serial terms and two square roots.) Where phi(w) underflows (w > 38.6) the
// K_j do not matter: callers take them at min(w, 40).
#pragma once

#include <array>
#include <cmath>

namespace sparcon::detail {

/// F_J for J = 4..7 (see above): the coefficients of y^0..y^21, kTailRatioSeries[J - 4].
inline constexpr std::array<std::array<double, 22>, 4> kTailRatioSeries = {{
    // J = 4: within 1.6e-16 relative of F_J, sum of |coefficients| 1.11
    {0.9420064129086112, -0.10071947460407307, -0.05654252551666272, -0.008843197623986145,
     0.002262930494373138, 0.0010295600783122596, -7.411530096611023e-05, -0.00010582885714868164,
     -2.66592811198656e-06, 1.0769465673332924e-05, 1.0994745274490874e-06, -1.104062109447378e-06,
     -1.883161194485407e-07, 1.1466500258544381e-07, 2.6717119450550578e-08, -1.2095485086220234e-08,
     -3.443697085237235e-09, 1.2838548557687485e-09, 3.871246063768644e-10, -1.2734316798192692e-10,
     -2.843870377824126e-11, 8.651453942657752e-12},
    // J = 5: within 1.9e-16 relative of F_J, sum of |coefficients| 1.12
    {0.9335369839405522, -0.11352341466594396, -0.06068792101473181, -0.006964395434071514,
     0.003422525082723346, 0.0009750508324237836, -0.00024155996228664346, -0.00011783399569655175,
     1.905611643766141e-05, 1.421948437877217e-05, -1.6312817657414481e-06, -1.7425967520574332e-06,
     1.5329217247457793e-07, 2.1687744924299078e-07, -1.6340735136372346e-08, -2.725326052586999e-08,
     1.982156398670935e-09, 3.3838143434317933e-09, -2.411539633497629e-10, -3.791726642637206e-10,
     1.9816629281117856e-11, 2.7833057930152746e-11},
    // J = 6: within 1.9e-16 relative of F_J, sum of |coefficients| 1.13
    {0.9253523731450783, -0.12546472573747208, -0.06389056290554908, -0.0047524509579304425,
     0.004434779960786478, 0.0007815327184482638, -0.00041040201923517165, -0.00010216333627566842,
     4.4820062253580174e-05, 1.3050160985022553e-05, -5.477801253014437e-06, -1.6581881015118953e-06,
     7.245171926842039e-07, 2.0819315781489822e-07, -1.0078642022401703e-07, -2.5424467598808215e-08,
     1.4146129970731223e-08, 2.9264996980533835e-09, -1.7903716369063023e-09, -2.912451940457737e-10,
     1.4553953355610335e-10, 1.875159424581853e-11},
    // J = 7: within 1.8e-16 relative of F_J, sum of |coefficients| 1.13
    {0.9174355001263548, -0.13661983174518888, -0.06628866462925778, -0.0023265599491837487,
     0.005268064006283839, 0.0004756066721713867, -0.0005596940581808826, -5.984684399780252e-05,
     6.909445392907314e-05, 6.567449967652241e-06, -9.28190689523843e-06, -5.834233520816606e-07,
     1.304072702717747e-06, 2.1324354313905206e-08, -1.8600992712683012e-07, 7.534087719572456e-09,
     2.5924229042960523e-08, -2.67712901743795e-09, -3.18844918237679e-09, 5.183218550677228e-10,
     2.5065287253795884e-10, -5.1835682845994403e-11},
}};

/// y = (2 t - 13/22) / (9/22) with t = 4 / (4 + w), and 1 / w, from one division.
struct TailVariables {
  double y, inverse_w;
};

inline TailVariables tail_variables(double w) {
  const double both = 1 / (w * (4 + w));  // 1 / (4 + w) = w both, 1 / w = (4 + w) both
  return {(176.0 / 9) * (w * both) - 13.0 / 9, (4 + w) * both};
}

/// K_0..K_J(w) (see above) for w in [4, 40] and J = 4..7. The 2D kernels
/// (profile_moments-inl.h, TailIntegrals) are the same steps on Highway vectors.
template <int J>
std::array<double, J + 1> tail_integrals(double w) {
  static_assert(J >= 4 && J <= 7, "kTailRatioSeries holds J = 4..7");
  const auto& series = kTailRatioSeries[J - 4];
  const auto [y, inverse_w] = tail_variables(w);
  const double y2 = y * y;
  double even = series[20], odd = series[21];
  for (int i = 18; i >= 0; i -= 2) {
    even = even * y2 + series[i];
    odd = odd * y2 + series[i + 1];
  }
  const double ratio = (J + 1) * inverse_w * (odd * y + even);  // r_J
  // Downwards from K_J = 1, K_(J+1) = r_J, then scaled.
  std::array<double, J + 1> k;
  double above = ratio;
  k[J] = 1;
  for (int j = J; j >= 1; --j) {
    k[j - 1] = (w * k[j] + above) * (1.0 / j);
    above = k[j];
  }
  const double scale = 1 / (w * k[0] + k[1]);
  for (double& value : k) value *= scale;
  return k;
}

}  // namespace sparcon::detail
