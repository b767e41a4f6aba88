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
// K_(j-1) = (K_(j+1) + w K_j) / j adds positive terms only and loses nothing. It starts from the
// ratio r_J = K_(J+1) / K_J, which the same recurrence writes as the continued fraction
//   r_J = (J+1) / (w + (J+2) / (w + (J+3) / (w + ...))) = (J+1)/w  1 / (1 + c_2 / (1 + c_3 / ...)),
// c_n = (J+n) / w^2, evaluated forwards (its convergents' numerators and denominators by
// A_n = A_(n-1) + c_n A_(n-2), no division; they stay below 2.3^n) to `depth` terms, the rest
// of the fraction t = c / (1 + t') (c its next term) taken from the fixed point of t = c / (1 + t)
// and that fixed point's slope in c (which saves about a third of the terms). The values
// of the downward recurrence are then scaled so that K_1 = 1 - w K_0 holds: K_0 = 1 / (w + r_0).
//
// tail_fraction_depth(w) is the depth that keeps every K_j, j <= 5 and j <= 7, within 6e-16 of
// its value in 30-digit arithmetic (mpmath quadrature, at 7 points of each band of w): 28 terms
// from w = 4, 6 from 20. (Upwards from an exact K_0 the recurrence would be 1e-11 off at w = 4;
// at w = 2 the fraction would need 60 terms.) Where phi(w) underflows (w > 38.6) the K_j do not
// matter: callers take them at min(w, 40).
#pragma once

#include <array>
#include <cmath>

namespace sparcon::detail {

/// Terms of the continued fraction for K_0..K_7 at w >= 4 (see above); 28 below 4.5 and for NaN.
inline int tail_fraction_depth(double w) {
  struct Band {
    double w;
    int depth;
  };
  static constexpr Band kBands[] = {{30, 6}, {20, 6},  {16, 8},  {12, 10}, {10, 12},
                                    {8, 14}, {7, 16},  {6, 18},  {5, 20},  {4.5, 24}};
  for (const Band& band : kBands)
    if (w >= band.w) return band.depth;
  return 28;
}

/// K_0..K_J(w) (see above) for w >= 4, the fraction taken to `depth` terms. The 2D kernels
/// (profile_moments-inl.h, TailIntegrals) are the same code on Highway vectors.
template <int J>
std::array<double, J + 1> tail_integrals(double w, int depth) {
  const double inverse_w2 = 1 / (w * w);
  // Convergents of 1 / (1 + c_2 / (1 + c_3 / ...)): A_0 = 0, A_1 = 1, B_0 = B_1 = 1.
  double a_before = 0, a = 1, b_before = 1, b = 1;
  for (int n = 2; n <= depth; ++n) {
    const double c = (J + n) * inverse_w2;
    const double a_next = c * a_before + a, b_next = c * b_before + b;
    a_before = a;
    a = a_next;
    b_before = b;
    b = b_next;
  }
  // The rest, t = c / (1 + t'), with t' = t + dt: t' - t ~ f'(c) / w^2 for t = f(c), the fixed
  // point f(c) = (sqrt(1 + 4 c) - 1) / 2 of t = c / (1 + t); t is the positive root of
  // t^2 + (1 + f'(c) / w^2) t - c = 0.
  const double c = (J + depth + 1) * inverse_w2, root = std::sqrt(1 + 4 * c);
  const double linear = 1 + inverse_w2 / root;
  const double tail = 2 * c / (linear + std::sqrt(linear * linear + 4 * c));
  const double ratio = (J + 1) / w * ((a + tail * a_before) / (b + tail * b_before));  // r_J
  // Downwards from K_J = 1, K_(J+1) = r_J, then scaled.
  std::array<double, J + 1> k;
  double above = ratio;
  k[J] = 1;
  for (int j = J; j >= 1; --j) {
    k[j - 1] = (w * k[j] + above) / j;
    above = k[j];
  }
  const double scale = 1 / (w * k[0] + k[1]);
  for (double& value : k) value *= scale;
  return k;
}

}  // namespace sparcon::detail
