// P_m = int_lo^hi (1 - u^2/R^2)^k u^m N(u; d, s^2) du (profile_moments.h).
#include "continuous/profile_moments.h"

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>
#include <vector>

#include "continuous/gauss_legendre.h"
#include "continuous/tail_integrals.h"

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

// Composite rule (see the header). For an integer k the profile is a polynomial in u and the
// rule runs in u; otherwise in theta, u = R sin(theta), where the profile is cos(theta)^(2k+1).
Moments by_quadrature(double k, double R, double lo, double hi, double d, double s) {
  constexpr double kPi = std::numbers::pi;
  // Where the integrand exceeds e^-72 of its peak: exp(-(delta x + x^2/2)/s^2) = e^-72 at x = W,
  // with delta the distance from d to [lo, hi].
  const double centre = std::clamp(d, lo, hi), delta = std::abs(d - centre);
  const double reach = 144 * s * s / (std::sqrt(delta * delta + 144 * s * s) + delta);
  const double wlo = std::max(lo, centre - reach), whi = std::min(hi, centre + reach);
  Moments out{};
  if (!(wlo < whi)) return out;
  const bool polynomial = k == std::round(k) && k <= 16;
  const double exponent = 2 * k + 1;
  const bool smooth_in_theta = exponent == std::round(exponent) && exponent <= 64;
  // The variable of the rule: u itself, or theta.
  auto to_variable = [&](double u) { return polynomial ? u : std::asin(std::clamp(u / R, -1.0, 1.0)); };
  const double x_lo = to_variable(wlo), x_hi = to_variable(whi);
  std::vector<double> breaks;
  const double width = polynomial ? 0.5 * s : std::min(kPi / 16, 0.5 * s / R);
  const int panels = std::max(1, static_cast<int>(std::ceil((x_hi - x_lo) / width)));
  const double step = (x_hi - x_lo) / panels;
  for (int i = 0; i <= panels; ++i) breaks.push_back(i == panels ? x_hi : x_lo + i * step);
  // The ends of the support, where the profile is not smooth in the variable of the rule.
  if (!polynomial && !smooth_in_theta) {
    constexpr int kEndLevels = 12;
    double inset = step;
    for (int j = 1; j <= kEndLevels; ++j) {
      inset *= 0.25;
      if (wlo <= -R) breaks.push_back(x_lo + inset);
      if (whi >= R) breaks.push_back(x_hi - inset);
    }
  }
  // d outside [lo, hi]: the integrand decays from the nearest end like exp(-x/l), l = s^2/delta;
  // panels [x, 1.5 x] from x = l/4 keep every panel within a few e-folds of its own size.
  const double decay = delta > 0 ? s * s / delta : 0;
  if (decay > 0 && decay < 0.5 * s) {
    for (double x = 0.25 * decay; x < whi - wlo; x *= 1.5)
      breaks.push_back(to_variable(d > hi ? whi - x : wlo + x));
  }
  std::sort(breaks.begin(), breaks.end());
  auto power = [](double base, int n) {
    double out = 1;
    for (int i = 0; i < n; ++i) out *= base;
    return out;
  };
  auto at = [&](double x) {
    if (polynomial) return std::pair{x, power(1 - (x / R) * (x / R), static_cast<int>(k)) * gaussian(x, d, s)};
    const double u = R * std::sin(x), c = std::cos(x);  // du = R cos(theta) dtheta
    const double profile = smooth_in_theta ? power(c, static_cast<int>(exponent)) : std::pow(c, exponent);
    return std::pair{u, R * profile * gaussian(u, d, s)};
  };
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
    if (breaks[i] < breaks[i + 1]) accumulate<8>(breaks[i], breaks[i + 1], at, out);
  return out;
}

// Gauss-Laguerre nodes and weights for int_0^inf f(w) e^-w dw (Golub-Welsch: the eigenvalues of
// the Jacobi matrix of the Laguerre polynomials and the squared first components of its
// eigenvectors), for the node counts of laguerre_rule.
struct GaussLaguerre {
  std::vector<double> x, w;
  explicit GaussLaguerre(int nodes) {
    Eigen::MatrixXd jacobi = Eigen::MatrixXd::Zero(nodes, nodes);
    for (int i = 0; i < nodes; ++i) {
      jacobi(i, i) = 2 * i + 1;
      if (i + 1 < nodes) jacobi(i, i + 1) = jacobi(i + 1, i) = i + 1;
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(jacobi);
    for (int i = 0; i < nodes; ++i) {
      x.push_back(solver.eigenvalues()[i]);
      w.push_back(solver.eigenvectors()(0, i) * solver.eigenvectors()(0, i));
    }
  }
};

// d more than 4 s outside [lo, hi], the interval long for the decay, and the profile smooth at
// the end e nearest to d. With x = |u - e| and delta = |d - e|,
//   N(u; d, s^2) = N(e; d, s^2) exp(-x/l) exp(-x^2/(2 s^2)),   l = s^2/delta,
// so the integral is N(e) l int_0^inf g(l w) e^-w dw with g(x) = profile(u) u^m exp(-x^2/(2 s^2)),
// a polynomial times a Gaussian of width delta/s >= 4 in w: laguerre_rule(delta / s), 24 points
// at widths below 6 (within 5e-15 of the composite rule, measured at delta = 4, 5, 6, 8 s for
// k = 1, 4/3, 2; 16 points were 6e-12 off at 4 s), fewer at larger widths. The truncation at
// the far end is below e^-40.
Moments by_laguerre(double k, double R, double lo, double hi, double d, double s) {
  const bool above = d > hi;
  const double end = above ? hi : lo, delta = std::abs(d - end), decay = s * s / delta;
  const LaguerreRule rule = laguerre_rule(delta / s);
  Moments out{};
  const int integer_k = static_cast<int>(k);
  for (int i = 0; i < rule.nodes; ++i) {
    const double x = decay * rule.x[i], u = above ? end - x : end + x;
    const double base = 1 - (u / R) * (u / R);
    double profile = 1;
    if (k == integer_k) {
      for (int p = 0; p < integer_k; ++p) profile *= base;
    } else {
      profile = std::pow(std::max(base, 0.0), k);
    }
    const double weight = rule.w[i] * profile * std::exp(-0.5 * (x / s) * (x / s));
    out[0] += weight;
    out[1] += weight * u;
    out[2] += weight * u * u;
    out[3] += weight * u * u * u;
  }
  const double factor = gaussian(end, d, s) * decay;
  for (double& m : out) m *= factor;
  return out;
}

// Whether by_laguerre applies (see there).
bool laguerre_applies(double k, double R, double lo, double hi, double d, double s) {
  const bool above = d > hi + 4 * s, below = d < lo - 4 * s;
  if (!above && !below) return false;
  const double end = above ? hi : lo, delta = std::abs(d - end);
  const bool smooth_end = k == std::round(k) || (above ? hi < R : lo > -R);
  return smooth_end && (hi - lo) * delta >= 40 * s * s;
}

// k = 1 or 2 and d more than kEndMomentsFrom = 4 s outside [lo, hi] (hi - lo >= s): with e the
// end nearest to d, w = |d - e| / s and u = e + h v (h = +-s, pointing into the interval),
// N(u; d, s^2) = phi(w) / s exp(-w v - v^2/2), so the integral over the half-line from e is
// phi(w) sum_j g_j K_j(w) (tail_integrals.h), g_j the coefficients in v of the polynomial
// (1 - u^2/R^2)^k u^m. The half-line beyond the other end (d is (hi - lo) + |d - e| behind it)
// is subtracted the same way where it is not below e^-40 of the whole ((hi - lo) |d - e| <
// 40 s^2; it is then at most e^-4.5 of it). The 2D kernels (profile_moments-inl.h, AddEndMoments)
// are the same computation on vectors. Against long-double adaptive quadrature (R = 1..16 s, the
// centre 5 and 7 s out, m = 1..3) it is within 8e-16 relative, where the closed form below was
// up to 2e-8 off (k = 1 at 7 s, R = s) and Gauss-Laguerre (which k = 2 took) 1e-15. Between 2
// and 4 s out the closed form still loses digits where R is close to s (k = 2, R = s: 7e-9;
// R >= 4 s: below 3e-11), and the tail integrals would need a fit reaching below w = 4.
template <int k>
void add_half_line(double R, double end, double h, double w, double sign, Moments& out) {
  constexpr int J = 2 * k + 3;
  const double clamped = std::min(w, 40.0);  // beyond, phi(w) is 0 (tail_integrals.h)
  const auto K = tail_integrals<J>(clamped);
  // q = 1 - u^2/R^2 = q0 + q1 v + q2 v^2; T_j = int q^k v^j; u^m = (end + h v)^m.
  const double q0 = (R - end) * (R + end) / (R * R), q1 = -2 * end * h / (R * R), q2 = -h * h / (R * R);
  std::array<double, 2 * k + 1> p;
  if constexpr (k == 1) {
    p = {q0, q1, q2};
  } else {
    p = {q0 * q0, 2 * q0 * q1, q1 * q1 + 2 * q0 * q2, 2 * q1 * q2, q2 * q2};
  }
  double t[4] = {};
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i <= 2 * k; ++i) t[j] += p[i] * K[i + j];
  const double factor = sign * normal_pdf(clamped), e = end;
  out[0] += factor * t[0];
  out[1] += factor * (e * t[0] + h * t[1]);
  out[2] += factor * (e * e * t[0] + 2 * e * h * t[1] + h * h * t[2]);
  out[3] += factor * (e * e * e * t[0] + 3 * e * e * h * t[1] + 3 * e * h * h * t[2] + h * h * h * t[3]);
}

template <int k>
Moments end_moments(double R, double lo, double hi, double d, double s) {
  const bool above = d > hi;
  const double end = above ? hi : lo, far_end = above ? lo : hi, delta = std::abs(d - end);
  const double h = above ? -s : s;
  Moments out{};
  add_half_line<k>(R, end, h, delta / s, 1, out);
  if ((hi - lo) * delta < 40 * s * s) add_half_line<k>(R, far_end, h, (delta + hi - lo) / s, -1, out);
  return out;
}

// k = 1 or 2: (1 - u^2/R^2)^k u^m against N(u; d, s^2) in closed form, from
// U_m = int_lo^hi u^m N(u; d, s^2) du = int (d + s z)^m phi(z) dz over [z1, z2] and the
// truncated moments J_m = int z^m phi = (m - 1) J_{m-2} - [z^(m-1) phi(z)]_{z1}^{z2}:
//   P_m = sum_i binomial(k, i) (-1/R^2)^i U_{m + 2i}.
// Where these cancel, the rules above: an interval narrow for the Gaussian (hi - lo < s) takes
// 16-point Gauss-Legendre (exact to rounding for a polynomial of degree <= 7 times a slowly
// varying Gaussian), a centre more than 4 s outside takes the tail integrals from the nearest
// end (end_moments above).
// The sum over i loses about (R/s)^k relative digits near the ends of the support; k = 2 is
// taken in closed form only while R <= 100 s (losing at most 1e4 ulp), otherwise by quadrature.
constexpr int kMaxClosedK = 2;

template <int k>
Moments polynomial_profile(double R, double lo, double hi, double d, double s) {
  if (hi - lo < s) {
    Moments out{};
    accumulate<16>(lo, hi, [&](double u) {
      const double base = 1 - (u / R) * (u / R);
      return std::pair{u, (k == 1 ? base : base * base) * gaussian(u, d, s)};
    }, out);
    return out;
  }
  // The closed form cancels the more the farther d lies outside [lo, hi].
  if (d < lo - kEndMomentsFrom * s || d > hi + kEndMomentsFrom * s) return end_moments<k>(R, lo, hi, d, s);
  static_assert(k >= 1 && k <= kMaxClosedK);
  constexpr int degree = 3 + 2 * k;  // highest U_m needed
  const double z1 = (lo - d) / s, z2 = (hi - d) / s, f1 = normal_pdf(z1), f2 = normal_pdf(z2);
  // U_m = int_lo^hi u^m N(u; d, s^2) du; integrating u^(m-1) (u - d) N by parts,
  // U_m = d U_(m-1) + (m - 1) s^2 U_(m-2) - s (hi^(m-1) f2 - lo^(m-1) f1).
  std::array<double, degree + 1> U{};
  U[0] = normal_mass(z1, z2);
  U[1] = d * U[0] + s * (f1 - f2);
  double lo_power = 1, hi_power = 1;  // lo^(m-1), hi^(m-1)
  for (int m = 2; m <= degree; ++m) {
    lo_power *= lo;
    hi_power *= hi;
    U[m] = d * U[m - 1] + (m - 1) * s * s * U[m - 2] - s * (hi_power * f2 - lo_power * f1);
  }
  const double q = -1 / (R * R);
  Moments out{};
  for (int m = 0; m <= 3; ++m)
    out[m] = k == 1 ? U[m] + q * U[m + 2] : U[m] + 2 * q * U[m + 2] + q * q * U[m + 2 * k];
  return out;
}

}  // namespace

LaguerreRule laguerre_rule(double width) {
  // The smallest width at which each rule is within 1e-15 (profile_moments.h), widest first.
  struct Band {
    double width;
    int nodes;
  };
  static constexpr Band kBands[] = {{32, 8}, {24, 10}, {16, 12}, {10, 14}, {8, 16}, {6, 20}, {0, 24}};
  static const std::vector<GaussLaguerre> rules = [] {
    std::vector<GaussLaguerre> out;
    for (const Band& band : kBands) out.emplace_back(band.nodes);
    return out;
  }();
  std::size_t i = 0;
  while (i + 1 < std::size(kBands) && !(width >= kBands[i].width)) ++i;  // NaN: the most nodes
  return {rules[i].x.data(), rules[i].w.data(), kBands[i].nodes};
}

std::array<double, 4> profile_moments(double k, double R, double lo, double hi, double d, double s) {
  if (k == 1) return polynomial_profile<1>(R, lo, hi, d, s);
  if (k == 2 && R <= 100 * s) return polynomial_profile<2>(R, lo, hi, d, s);
  return laguerre_applies(k, R, lo, hi, d, s) ? by_laguerre(k, R, lo, hi, d, s)
                                              : by_quadrature(k, R, lo, hi, d, s);
}

}  // namespace sparcon::detail
