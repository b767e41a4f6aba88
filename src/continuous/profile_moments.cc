// P_m = int_lo^hi (1 - u^2/R^2)^k u^m N(u; d, s^2) du (profile_moments.h).
#include "continuous/profile_moments.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "continuous/gauss_legendre.h"

namespace sparcon::detail {
namespace {

using Moments = std::array<double, 4>;

double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi); }

// Phi(z2) - Phi(z1) for z1 <= z2, from the tails so that it keeps its relative accuracy.
double normal_mass(double z1, double z2) {
  const double r = 1 / std::numbers::sqrt2;
  if (z1 >= 0) return 0.5 * (std::erfc(z1 * r) - std::erfc(z2 * r));
  if (z2 <= 0) return 0.5 * (std::erfc(-z2 * r) - std::erfc(-z1 * r));
  return 1 - 0.5 * std::erfc(-z1 * r) - 0.5 * std::erfc(z2 * r);
}

// Adds the rule's sums over x in [lo, hi] of f(x) u(x)^m for m = 0..3, where at(x) gives
// {u, f} (f: the integrand's weight, the Jacobian included).
template <int N, class At>
void accumulate(double lo, double hi, const At& at, Moments& out) {
  const auto& rule = GaussLegendre<N>::get();
  const double half = 0.5 * (hi - lo), middle = 0.5 * (hi + lo);
  for (int i = 0; i < N; ++i) {
    const auto [u, f] = at(middle + half * rule.x[i]);
    const double weight = half * rule.w[i] * f;
    out[0] += weight;
    out[1] += weight * u;
    out[2] += weight * u * u;
    out[3] += weight * u * u * u;
  }
}

double gaussian(double u, double d, double s) {
  const double z = (u - d) / s;
  return normal_pdf(z) / s;
}

// Composite rule in theta, u = R sin(theta) (see the header).
Moments by_quadrature(double k, double R, double lo, double hi, double d, double s) {
  constexpr double kPi = std::numbers::pi;
  // Where the integrand exceeds e^-72 of its peak: exp(-(delta x + x^2/2)/s^2) = e^-72 at x = W,
  // with delta the distance from d to [lo, hi].
  const double centre = std::clamp(d, lo, hi), delta = std::abs(d - centre);
  const double reach = 144 * s * s / (std::sqrt(delta * delta + 144 * s * s) + delta);
  const double wlo = std::max(lo, centre - reach), whi = std::min(hi, centre + reach);
  Moments out{};
  if (!(wlo < whi)) return out;
  auto theta = [&](double u) { return std::asin(std::clamp(u / R, -1.0, 1.0)); };
  const double t_lo = theta(wlo), t_hi = theta(whi);
  std::vector<double> breaks;
  const double width = std::min(kPi / 16, 0.5 * s / R);
  const int panels = std::max(1, static_cast<int>(std::ceil((t_hi - t_lo) / width)));
  const double step = (t_hi - t_lo) / panels;
  for (int i = 0; i <= panels; ++i) breaks.push_back(i == panels ? t_hi : t_lo + i * step);
  // The ends of the support: cos(theta)^(2k+1) is not smooth there.
  constexpr int kEndLevels = 12;
  for (int j = 1; j <= kEndLevels; ++j) {
    const double inset = step * std::pow(0.25, j);
    if (wlo <= -R) breaks.push_back(t_lo + inset);
    if (whi >= R) breaks.push_back(t_hi - inset);
  }
  // d outside [lo, hi]: the integrand decays from the nearest end like exp(-x/l), l = s^2/delta;
  // panels [x, 1.5 x] from x = l/4 keep every panel within a few e-folds of its own size.
  const double decay = delta > 0 ? s * s / delta : 0;
  if (decay > 0 && decay < 0.5 * s) {
    for (double x = 0.25 * decay; x < whi - wlo; x *= 1.5)
      breaks.push_back(d > hi ? theta(whi - x) : theta(wlo + x));
  }
  std::sort(breaks.begin(), breaks.end());
  const double coefficient = R;  // du = R cos(theta) dtheta
  auto at = [&](double t) {
    const double u = R * std::sin(t), c = std::cos(t);
    return std::pair{u, coefficient * std::pow(c, 2 * k + 1) * gaussian(u, d, s)};
  };
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
    if (breaks[i] < breaks[i + 1]) accumulate<8>(breaks[i], breaks[i + 1], at, out);
  return out;
}

// k = 1: (1 - u^2/R^2) u^m against N(u; d, s^2), from U_m = int_lo^hi u^m N(u; d, s^2) du
// = int (d + s z)^m phi(z) dz over [z1, z2], with the truncated moments
// J_m = int z^m phi = (m - 1) J_{m-2} - [z^(m-1) phi(z)]_{z1}^{z2}.
Moments parabola(double R, double lo, double hi, double d, double s) {
  if (hi - lo < s) {
    Moments out{};
    accumulate<16>(lo, hi, [&](double u) {
      return std::pair{u, (1 - (u / R) * (u / R)) * gaussian(u, d, s)};
    }, out);
    return out;
  }
  if (d < lo - 8 * s || d > hi + 8 * s) return by_quadrature(1, R, lo, hi, d, s);
  const double z1 = (lo - d) / s, z2 = (hi - d) / s, f1 = normal_pdf(z1), f2 = normal_pdf(z2);
  std::array<double, 6> J{};
  J[0] = normal_mass(z1, z2);
  J[1] = f1 - f2;
  for (int m = 2; m <= 5; ++m)
    J[m] = (m - 1) * J[m - 2] - (std::pow(z2, m - 1) * f2 - std::pow(z1, m - 1) * f1);
  std::array<double, 6> U{};
  for (int m = 0; m <= 5; ++m) {
    double binomial = 1;
    for (int i = 0; i <= m; ++i) {
      U[m] += binomial * std::pow(d, m - i) * std::pow(s, i) * J[i];
      binomial = binomial * (m - i) / (i + 1);
    }
  }
  const double r2 = R * R;
  return {U[0] - U[2] / r2, U[1] - U[3] / r2, U[2] - U[4] / r2, U[3] - U[5] / r2};
}

}  // namespace

std::array<double, 4> profile_moments(double k, double R, double lo, double hi, double d, double s) {
  return k == 1 ? parabola(R, lo, hi, d, s) : by_quadrature(k, R, lo, hi, d, s);
}

}  // namespace sparcon::detail
