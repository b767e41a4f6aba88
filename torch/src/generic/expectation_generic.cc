// Device-generic continuous expectations (generic/expectation_generic.h).
#include "generic/expectation_generic.h"

#include "continuous/gauss_legendre.h"  // the core's rule (src/continuous)

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace sparcon::torch::generic {
namespace {

constexpr double kPi = std::numbers::pi;

at::ScalarType wide_type(const at::Tensor& t) { return t.device().is_mps() ? at::kFloat : at::kDouble; }

// R of docs/math.md section 6 (the core's beta_gaussian_radius).
double radius(double alpha, int dimension) {
  const double a1 = alpha - 1, q = alpha / a1, d = dimension;
  const double log_inner =
      std::lgamma(d / 2 + q) - std::lgamma(q) - (d / 2) * std::log(kPi) + std::log(2 / a1) / a1;
  return std::exp(log_inner * a1 / (2 + a1 * d));
}

at::Tensor normal_pdf(const at::Tensor& z) { return at::exp(-0.5 * z * z) / std::sqrt(2 * kPi); }

// Phi(z2) - Phi(z1), z1 <= z2, from the tails (the core's normal_mass).
at::Tensor normal_mass(const at::Tensor& z1, const at::Tensor& z2) {
  const double r = 1 / std::numbers::sqrt2;
  return at::where(z1 >= 0, 0.5 * (at::erfc(z1 * r) - at::erfc(z2 * r)),
                   at::where(z2 <= 0, 0.5 * (at::erfc(-z2 * r) - at::erfc(-z1 * r)),
                             1 - 0.5 * at::erfc(-z1 * r) - 0.5 * at::erfc(z2 * r)));
}

// P_0..P_2 of the profile (1 - u^2/a^2) (k = 1) on [-a, a] in closed form: with
// U_m = int u^m N(u; d, s^2) = sum_i binom(m, i) d^(m-i) s^i J_i and the truncated moments
// J_m = (m-1) J_{m-2} - [z^(m-1) phi(z)], P_m = U_m - U_{m+2}/a^2.
std::array<at::Tensor, 3> parabola_moments(const at::Tensor& a, const at::Tensor& d, const at::Tensor& s) {
  const at::Tensor z1 = (-a - d) / s, z2 = (a - d) / s, f1 = normal_pdf(z1), f2 = normal_pdf(z2);
  std::array<at::Tensor, 5> J;
  J[0] = normal_mass(z1, z2);
  J[1] = f1 - f2;
  at::Tensor z1p = at::ones_like(z1), z2p = at::ones_like(z2);
  for (int m = 2; m <= 4; ++m) {
    z1p = z1p * z1;
    z2p = z2p * z2;
    J[m] = (m - 1) * J[m - 2] - (z2p * f2 - z1p * f1);
  }
  static constexpr int binomial[5][5] = {{1}, {1, 1}, {1, 2, 1}, {1, 3, 3, 1}, {1, 4, 6, 4, 1}};
  std::array<at::Tensor, 5> U;
  for (int m = 0; m <= 4; ++m) {
    U[m] = at::zeros_like(d);
    for (int i = 0; i <= m; ++i) U[m] = U[m] + binomial[m][i] * at::pow(d, m - i) * at::pow(s, i) * J[i];
  }
  const at::Tensor q = 1 / (a * a);
  return {U[0] - q * U[2], U[1] - q * U[3], U[2] - q * U[4]};
}

// P_0..P_2 by the fixed rule: kPanels x 8 Gauss-Legendre points in theta over
// [asin(lo/a), asin(hi/a)], lo, hi = the support clipped to d -+ 12 s.
std::array<at::Tensor, 3> quadrature_moments(double k, const at::Tensor& a, const at::Tensor& d, const at::Tensor& s) {
  const auto& rule = sparcon::detail::GaussLegendre<8>::get();
  std::vector<double> x, w;
  for (int panel = 0; panel < kPanels; ++panel)
    for (int i = 0; i < 8; ++i) {
      x.push_back((panel + 0.5 * (rule.x[i] + 1)) / kPanels);  // in [0, 1]
      w.push_back(0.5 * rule.w[i] / kPanels);
    }
  const auto options = d.options();
  const at::Tensor nodes = at::tensor(x, options.device(at::kCPU)).to(d.device());
  const at::Tensor weights = at::tensor(w, options.device(at::kCPU)).to(d.device());
  const at::Tensor lo = at::maximum(-a, d - 12 * s), hi = at::minimum(a, d + 12 * s);
  const at::Tensor empty = lo >= hi;
  const at::Tensor t_lo = at::asin((lo / a).clamp(-1, 1)).unsqueeze(-1);
  const at::Tensor t_hi = at::asin((hi / a).clamp(-1, 1)).unsqueeze(-1);
  const at::Tensor theta = t_lo + (t_hi - t_lo) * nodes;  // (..., M)
  const at::Tensor u = a.unsqueeze(-1) * at::sin(theta);
  const at::Tensor c = at::cos(theta).clamp_min(0);
  const at::Tensor z = (u - d.unsqueeze(-1)) / s.unsqueeze(-1);
  // du = a cos(theta) dtheta; the profile (1 - u^2/a^2)^k = cos(theta)^(2k).
  const at::Tensor f = weights * (t_hi - t_lo) * a.unsqueeze(-1) * at::pow(c, 2 * k + 1) * normal_pdf(z) / s.unsqueeze(-1);
  std::array<at::Tensor, 3> out;
  at::Tensor power = at::ones_like(u);
  for (int m = 0; m < 3; ++m) {
    out[m] = at::where(empty, 0.0, (f * power).sum(-1));
    power = power * u;
  }
  return out;
}

}  // namespace

std::pair<at::Tensor, at::Tensor> beta_gaussian_1d(double alpha, const at::Tensor& sigma2) {
  const double a1 = alpha - 1, R = radius(alpha, 1);
  const at::Tensor minus_tau = 0.5 * R * R * at::pow(sigma2, -a1 / (a1 + 2));
  return {minus_tau, at::sqrt(2 * minus_tau * sigma2)};
}

ExpectationParts expectation_1d(double alpha, const at::Tensor& mu_in, const at::Tensor& sigma2_in,
                                const at::Tensor& centers_in, const at::Tensor& widths_in) {
  const at::ScalarType wide = wide_type(mu_in);
  const at::Tensor mu = mu_in.to(wide).unsqueeze(1), sigma2 = sigma2_in.to(wide).unsqueeze(1);
  const at::Tensor c = centers_in.to(mu.device(), wide).unsqueeze(0), w = widths_in.to(mu.device(), wide).unsqueeze(0);
  const at::Tensor d = c - mu;  // (B, N)
  if (alpha == 1) {
    const at::Tensor v = sigma2 + w;
    const at::Tensor r = at::exp(-0.5 * d * d / v) / at::sqrt(2 * kPi * v);
    return {r, r * d / v, 0.5 * r * (d * d / (v * v) - 1 / v)};
  }
  const double k = 1 / (alpha - 1);
  const auto [minus_tau, a_column] = beta_gaussian_1d(alpha, sigma2);
  const at::Tensor coefficient = at::pow((alpha - 1) * minus_tau, k);  // (B, 1)
  const at::Tensor a = a_column.expand_as(d), s = at::sqrt(w).expand_as(d);
  std::array<at::Tensor, 3> P;
  if (alpha == 2) {
    // The closed form, and the rule only for the pairs where the closed form cancels (d more
    // than 8 s outside the support, or a support narrow for the basis function).
    P = parabola_moments(a, d, s);
    const at::Tensor rule = ~((at::abs(d) <= a + 8 * s) & (2 * a >= s));
    if (!d.is_meta() && rule.any().item<bool>()) {
      const at::Tensor index = rule.flatten().nonzero().flatten();
      auto pick = [&](const at::Tensor& t) { return t.flatten().index_select(0, index); };
      const std::array<at::Tensor, 3> Q = quadrature_moments(k, pick(a), pick(d), pick(s));
      for (int m = 0; m < 3; ++m) P[m] = P[m].flatten().index_copy(0, index, Q[m]).view_as(d);
    }
  } else {
    P = quadrature_moments(k, a, d, s);
  }
  return {coefficient * P[0], coefficient * (d * P[0] - P[1]) / w,
          coefficient * (d * P[1] - P[2]) / (w * (alpha + 1) * sigma2)};
}

ExpectationParts expectation_2d_gaussian(const at::Tensor& mu_in, const at::Tensor& sigma_in,
                                         const at::Tensor& centers_in, const at::Tensor& widths_in) {
  const at::ScalarType wide = wide_type(mu_in);
  const at::Tensor mu = mu_in.to(wide).unsqueeze(1);              // (B, 1, 2)
  const at::Tensor sigma = sigma_in.to(wide).unsqueeze(1);        // (B, 1, 2, 2)
  const at::Tensor c = centers_in.to(mu.device(), wide).unsqueeze(0);   // (1, N, 2)
  const at::Tensor W = widths_in.to(mu.device(), wide).unsqueeze(0);    // (1, N, 2, 2)
  const at::Tensor v = sigma + W;                                  // (B, N, 2, 2)
  const at::Tensor v00 = v.select(-1, 0).select(-1, 0), v01 = 0.5 * (v.select(-1, 1).select(-1, 0) + v.select(-1, 0).select(-1, 1)),
                   v11 = v.select(-1, 1).select(-1, 1);
  const at::Tensor det = v00 * v11 - v01 * v01;
  const at::Tensor inv = at::stack({at::stack({v11, -v01}, -1), at::stack({-v01, v00}, -1)}, -2) / det.unsqueeze(-1).unsqueeze(-1);
  const at::Tensor d = c - mu;                                     // (B, N, 2)
  const at::Tensor vd = at::matmul(inv, d.unsqueeze(-1)).squeeze(-1);  // V^-1 d
  const at::Tensor r = at::exp(-0.5 * (d * vd).sum(-1)) / (2 * kPi * at::sqrt(det));
  const at::Tensor dmu = r.unsqueeze(-1) * vd;
  const at::Tensor dsigma = 0.5 * r.unsqueeze(-1).unsqueeze(-1) * (vd.unsqueeze(-1) * vd.unsqueeze(-2) - inv);
  return {r, dmu, dsigma};
}

}  // namespace sparcon::torch::generic
