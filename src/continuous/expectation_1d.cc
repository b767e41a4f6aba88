// Expectations of Gaussian basis functions under 1D continuous alpha-entmax densities, and their
// gradients (sparcon/continuous.h; MATH.md sections 2 and 3).
//
// For one density p (location mu, scale sigma2, half-width a) and one basis function
// psi(t) = N(t; c, w), with u = t - mu and d = c - mu:
//   r       = int p(u) psi dt
//   dr/dmu  = int p(u) psi (c - t)/w dt                       (psi' under the integral)
//   dr/ds2  = 1/((alpha+1) sigma2) int p(u) u psi (c - t)/w dt
// The last holds because every member of the family is a scale family in u with scale
// a ~ sigma2^(1/(alpha+1)) (alpha = 1: the standard deviation), so r(sigma2) = int h(x)
// psi(mu + a x) dx and dr/da = (1/a) int p u psi' dt.
//
// alpha = 1: closed form, r = N(mu; c, sigma2 + w).
// alpha = 2: closed form in truncated Gaussian moments, centred at c (MATH.md's warning: the
//   form theta . E[phi psi] - tau E[psi] cancels in float). Where the moments cancel instead,
//   quadrature exact to rounding: when the support is narrow for the basis function
//   (a < sqrt(w)/2) a 16-point Gauss-Legendre rule over [-a, a] (a polynomial times a slowly
//   varying Gaussian), and when c lies more than 8 sqrt(w) outside the support the rule below.
// Other alpha: p(u) = C (1 - u^2/a^2)^k, k = 1/(alpha-1); with u = a sin(theta) the integrand
//   C a cos(theta)^(2k+1) psi(mu + a sin theta) is smooth but at theta = +-pi/2. Composite
//   8-point Gauss-Legendre on panels no wider than sqrt(w)/2 in u (and pi/16 in theta), only
//   within 12 standard deviations of psi's centre (clamped into the support), with panels
//   graded geometrically towards the ends of the support. Measured against adaptive quadrature in the
//   tests: relative error below 1e-10 in double.
// Everything is computed in double, whatever T.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "check.h"
#include "continuous/beta_gaussian.h"
#include "continuous/checks.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

constexpr double kPi = std::numbers::pi;

// Gauss-Legendre nodes and weights on [-1, 1], computed once by Newton's method on P_n.
template <int N>
struct GaussLegendre {
  std::array<double, N> x{}, w{};
  GaussLegendre() {
    for (int i = 0; i < N; ++i) {
      double z = std::cos(kPi * (i + 0.75) / (N + 0.5)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = z;
        for (int j = 2; j <= N; ++j) {
          const double p2 = ((2.0 * j - 1) * z * p1 - (j - 1.0) * p0) / j;
          p0 = p1;
          p1 = p2;
        }
        dp = N * (z * p1 - p0) / (z * z - 1);
        const double step = p1 / dp;
        z -= step;
        if (std::abs(step) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
  }
};

const GaussLegendre<8>& gauss8() {
  static const GaussLegendre<8> rule;
  return rule;
}
const GaussLegendre<16>& gauss16() {
  static const GaussLegendre<16> rule;
  return rule;
}

// The three integrals of one (density, basis function) pair.
struct Integrals {
  double r = 0, dmu = 0, dsigma2 = 0;
};

double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * kPi); }

// Phi(z2) - Phi(z1) for z1 <= z2, from the tails so that it keeps its relative accuracy.
double normal_mass(double z1, double z2) {
  const double r = 1 / std::numbers::sqrt2;
  if (z1 >= 0) return 0.5 * (std::erfc(z1 * r) - std::erfc(z2 * r));
  if (z2 <= 0) return 0.5 * (std::erfc(-z2 * r) - std::erfc(-z1 * r));
  return 1 - 0.5 * std::erfc(-z1 * r) - 0.5 * std::erfc(z2 * r);
}

Integrals gaussian(double mu, double sigma2, double c, double w) {
  const double v = sigma2 + w, d = c - mu;
  Integrals out;
  out.r = std::exp(-0.5 * d * d / v) / std::sqrt(2 * kPi * v);
  out.dmu = out.r * d / v;
  out.dsigma2 = 0.5 * out.r * (d * d / (v * v) - 1 / v);
  return out;
}

// Adds to `out` a quadrature rule's sums over [lo, hi] in a variable x, where at(x) gives the
// point u = t - mu and the density times the Jacobian du/dx there: the three integrals of
// p(u) psi(mu + u) times 1, (d - u)/w and u (d - u)/(w (alpha+1) sigma2)  (scale_s2 is the last
// factor's 1/((alpha+1) sigma2)).
struct QuadraturePoint {
  double u, density_dudx;
};

template <class Rule, class At>
void accumulate(const Rule& rule, double lo, double hi, double d, double w, double scale_s2,
                const At& at, Integrals& out) {
  const double half = 0.5 * (hi - lo), middle = 0.5 * (hi + lo);
  const double norm = 1 / std::sqrt(2 * kPi * w);
  for (std::size_t i = 0; i < rule.x.size(); ++i) {
    const QuadraturePoint point = at(middle + half * rule.x[i]);
    const double e = point.u - d;
    const double weight = half * rule.w[i] * point.density_dudx * norm * std::exp(-0.5 * e * e / w);
    out.r += weight;
    out.dmu += weight * (d - point.u) / w;
    out.dsigma2 += weight * point.u * (d - point.u) / w * scale_s2;
  }
}

Integrals beta_gaussian(double alpha, double mu, double sigma2, double tau, double a, double c,
                        double w);

// alpha = 2: p(u) = (a^2 - u^2)/(2 sigma2) on [-a, a].
Integrals parabola(double mu, double sigma2, double a, double c, double w) {
  const double d = c - mu, s = std::sqrt(w);
  Integrals out;
  // Far outside the support the moments cancel by about (d/a)^2 (d/s)^2: the values there are
  // below 1e-14 of psi's peak, and the quadrature keeps their relative accuracy.
  if (std::abs(d) - a > 8 * s) return beta_gaussian(2, mu, sigma2, -a * a / (2 * sigma2), a, c, w);
  if (a < 0.5 * s) {
    accumulate(gauss16(), -a, a, d, w, 1 / (3 * sigma2), [&](double u) {
      return QuadraturePoint{u, (a * a - u * u) / (2 * sigma2)};
    }, out);
    return out;
  }
  // U_m = int_{-a}^{a} u^m psi(mu + u) du = int (d + s z)^m phi(z) dz over [z1, z2], from the
  // truncated moments J_m = int z^m phi = (m - 1) J_{m-2} - [z^(m-1) phi(z)]_{z1}^{z2}.
  const double z1 = (-a - d) / s, z2 = (a - d) / s, f1 = normal_pdf(z1), f2 = normal_pdf(z2);
  std::array<double, 5> J{};
  J[0] = normal_mass(z1, z2);
  J[1] = f1 - f2;
  for (int m = 2; m <= 4; ++m)
    J[m] = (m - 1) * J[m - 2] - (std::pow(z2, m - 1) * f2 - std::pow(z1, m - 1) * f1);
  std::array<double, 5> U{};
  for (int m = 0; m <= 4; ++m) {
    double binomial = 1;
    for (int i = 0; i <= m; ++i) {
      U[m] += binomial * std::pow(d, m - i) * std::pow(s, i) * J[i];
      binomial = binomial * (m - i) / (i + 1);
    }
  }
  const double a2 = a * a;
  out.r = (a2 * U[0] - U[2]) / (2 * sigma2);
  out.dmu = (a2 * d * U[0] - a2 * U[1] - d * U[2] + U[3]) / (2 * sigma2 * w);
  out.dsigma2 = (a2 * d * U[1] - a2 * U[2] - d * U[3] + U[4]) / (6 * sigma2 * sigma2 * w);
  return out;
}

// Any other alpha > 1, by quadrature in theta (see the top of the file).
Integrals beta_gaussian(double alpha, double mu, double sigma2, double tau, double a, double c,
                        double w) {
  const double k = 1 / (alpha - 1), d = c - mu, s = std::sqrt(w);
  // Where the integrand is not negligible relative to the integral: within 12 standard
  // deviations of psi's centre, moved into the support when it lies outside (the integrand then
  // peaks at the nearest end and decays from it faster still).
  const double centre = std::clamp(d, -a, a);
  const double lo = std::max(-a, centre - 12 * s), hi = std::min(a, centre + 12 * s);
  Integrals out;
  if (!(lo < hi)) return out;
  const double coefficient = std::pow((alpha - 1) * -tau, k);  // p(0)
  const double scale_s2 = 1 / ((alpha + 1) * sigma2);
  const double t_lo = std::asin(std::clamp(lo / a, -1.0, 1.0));
  const double t_hi = std::asin(std::clamp(hi / a, -1.0, 1.0));
  // In theta, dt p(u) = a cos(theta) p(a sin(theta)) dtheta = a C cos(theta)^(2k+1) dtheta.
  auto at = [&](double theta) {
    return QuadraturePoint{a * std::sin(theta), a * coefficient * std::pow(std::cos(theta), 2 * k + 1)};
  };
  auto panel = [&](double p_lo, double p_hi) { accumulate(gauss8(), p_lo, p_hi, d, w, scale_s2, at, out); };
  // Uniform panels, and at an end of the support (theta = +-pi/2) geometric ones inside the
  // first/last panel, of widths step 4^-j.
  const double width = std::min(kPi / 16, 0.5 * s / a);
  const int panels = std::max(1, static_cast<int>(std::ceil((t_hi - t_lo) / width)));
  const double step = (t_hi - t_lo) / panels;
  std::vector<double> breaks;
  for (int i = 0; i <= panels; ++i) breaks.push_back(i == panels ? t_hi : t_lo + i * step);
  constexpr int kGrading = 12;
  for (int j = 1; j <= kGrading; ++j) {
    const double inset = step * std::pow(0.25, j);
    if (t_lo <= -kPi / 2 + 1e-12) breaks.push_back(t_lo + inset);
    if (t_hi >= kPi / 2 - 1e-12) breaks.push_back(t_hi - inset);
  }
  std::sort(breaks.begin(), breaks.end());
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
    if (breaks[i] < breaks[i + 1]) panel(breaks[i], breaks[i + 1]);
  return out;
}

template <class T>
void check_inputs(const char* fn, T alpha, std::span<const T> mu, std::span<const T> sigma2,
                  const GaussianBasis1D<T>& basis) {
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  check_size(fn, "sigma2", sigma2, mu.size(), "mu.size()");
  check_basis(fn, basis);
  for (std::size_t b = 0; b < mu.size(); ++b)
    check_density_arguments(fn, alpha, mu[b], sigma2[b]);
}

// Calls visit(b, j, integrals) for every pair.
template <class T, class Visit>
void for_each_pair(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                   const GaussianBasis1D<T>& basis, Visit&& visit) {
  for (std::size_t b = 0; b < mu.size(); ++b) {
    const Density1D<double> density(alpha, mu[b], sigma2[b]);  // tau, a in double for any T
    const double m = mu[b], s2 = sigma2[b], a = density.half_width(), tau = density.tau();
    for (std::size_t j = 0; j < basis.size(); ++j) {
      const double c = basis.centers[j], w = basis.widths[j];
      visit(b, j,
            alpha == 1   ? gaussian(m, s2, c, w)
            : alpha == 2 ? parabola(m, s2, a, c, w)
                         : beta_gaussian(alpha, m, s2, tau, a, c, w));
    }
  }
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void expectation_1d(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                    const GaussianBasis1D<T>& basis, std::span<T> r) {
  const char* fn = "expectation_1d";
  detail::check_inputs(fn, alpha, mu, sigma2, basis);
  detail::check_size(fn, "r", r, mu.size() * basis.size(), "mu.size() * basis.size()");
  const std::size_t n = basis.size();
  detail::for_each_pair(alpha, mu, sigma2, basis, [&](std::size_t b, std::size_t j, const auto& i) {
    r[b * n + j] = static_cast<T>(i.r);
  });
}

template <std::floating_point T>
void expectation_1d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                             const GaussianBasis1D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma2, std::span<T> r) {
  const char* fn = "expectation_1d_backward";
  detail::check_inputs(fn, alpha, mu, sigma2, basis);
  detail::check_size(fn, "g", g, mu.size() * basis.size(), "mu.size() * basis.size()");
  detail::check_size(fn, "dmu", dmu, mu.size(), "mu.size()");
  detail::check_size(fn, "dsigma2", dsigma2, mu.size(), "mu.size()");
  if (!r.empty()) detail::check_size(fn, "r", r, mu.size() * basis.size(), "mu.size() * basis.size()");
  const std::size_t n = basis.size();
  std::vector<double> by_mu(mu.size()), by_sigma2(mu.size());
  detail::for_each_pair(alpha, mu, sigma2, basis, [&](std::size_t b, std::size_t j, const auto& i) {
    if (!r.empty()) r[b * n + j] = static_cast<T>(i.r);
    by_mu[b] += static_cast<double>(g[b * n + j]) * i.dmu;
    by_sigma2[b] += static_cast<double>(g[b * n + j]) * i.dsigma2;
  });
  for (std::size_t b = 0; b < mu.size(); ++b) {
    dmu[b] = static_cast<T>(by_mu[b]);
    dsigma2[b] = static_cast<T>(by_sigma2[b]);
  }
}

template void expectation_1d(float, std::span<const float>, std::span<const float>,
                             const GaussianBasis1D<float>&, std::span<float>);
template void expectation_1d(double, std::span<const double>, std::span<const double>,
                             const GaussianBasis1D<double>&, std::span<double>);
template void expectation_1d_backward(float, std::span<const float>, std::span<const float>,
                                      const GaussianBasis1D<float>&, std::span<const float>,
                                      std::span<float>, std::span<float>, std::span<float>);
template void expectation_1d_backward(double, std::span<const double>, std::span<const double>,
                                      const GaussianBasis1D<double>&, std::span<const double>,
                                      std::span<double>, std::span<double>, std::span<double>);

}  // namespace sparcon
