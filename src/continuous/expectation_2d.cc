// Expectations of Gaussian basis functions under 2D continuous alpha-entmax densities, and their
// gradients (sparcon/continuous.h; docs/math.md sections 6, 7 and 11).
//
// For one density p (location mu, scale Sigma) and one basis function psi = N(t; c, S), with
// u = t - mu, d = c - mu and P = S^-1:
//   r = E_p[psi],   dr/dmu = E_p[grad psi] = P (d E0 - E1),
//   dr/dSigma = 1/2 [sym(M Sigma^-1) - gamma tr(M) Sigma^-1],   M = P (d E1^T - E2),
// where E0 = E_p[psi], E1 = E_p[u psi], E2 = E_p[u u^T psi]. The Sigma gradient holds for every
// alpha because p is elliptical: p(t) = |det A|^-1 h(A^-1 u) with a fixed h and
// A A^T = K ~ Sigma det(Sigma)^(-gamma), so dr/dA = E_p[grad psi u^T] A^-T, dr/dK = M K^-1 / 2,
// and the chain rule through K(Sigma) gives the gamma term.
//
// alpha = 1: closed form, r = N(mu; c, V), V = Sigma + S, dr/dmu = r V^-1 d,
//   dr/dSigma = r/2 (V^-1 d d^T V^-1 - V^-1).
// alpha > 1: p = C (1 - rho^2/rho_max^2)^k on the ellipse, k = 1/(alpha-1), C = ((alpha-1)(-tau))^k,
//   rho_max^2 = -2 tau; with t = mu + rho e(v), e(v) = Sigma^(1/2) (cos v, sin v),
//   E_m = sqrt(det Sigma) int_0^2pi dv int_0^rho_max p(rho) rho u^(m) psi drho. Along a ray psi is a
//   Gaussian in rho, psi = F(v) N(rho; b/a, 1/a) with a = e^T P e, b = e^T P d and
//   F = sqrt(2 pi / a) exp(-(d^T P d - b^2/a)/2) / (2 pi sqrt(det S)), so the radial integrals are
//   the profile moments P_1..P_3 (profile_moments.h: closed form for alpha = 2). The angle takes
//   the periodic trapezoid rule v_i = 2 pi i / n: it converges geometrically for this smooth
//   periodic integrand, at a rate set by the angular width of psi seen from mu,
//   w ~ s / rho_eff with s the smallest standard deviation of psi in whitened coordinates and
//   rho_eff = sqrt(rho_max^2 + rho_max min(D, rho_max + 40 s)) (D the whitened distance from mu
//   to c); the error of the rule is about exp(-(n w)^2 / 2), so n = 8 rho_eff / s (at least 32,
//   a multiple of 8) keeps it near e^-32 ~ 1e-14. (Measured against n = 20 rho_eff / s on random
//   densities with the paper's basis, 6 rho_eff / s is already 1e-14 of the row's largest r, but
//   a basis function twice as narrow as the support and 3:1 anisotropic centred at mu, where
//   the minimum of 16 nodes applied, was 1e-8 off: the bound is what holds in general.)
//   Rays on which psi stays below e^-44 of its largest value on the disk are skipped (their
//   share is below 1e-15 of r even when the best ray peaks at the edge of the support).
// Everything is computed in double, whatever T.
#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "check.h"
#include "continuous/batch.h"
#include "continuous/checks.h"
#include "continuous/matrix2.h"
#include "continuous/profile_moments.h"
#include "parallel_rows.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

constexpr double kPi = std::numbers::pi;
// Rays on which psi stays below e^-44 of its largest value on the disk are skipped.
constexpr double kNegligible = 44;

// r and its gradients for one (density, basis function) pair.
struct Integrals2D {
  double r = 0;
  Eigen::Vector2d dmu = Eigen::Vector2d::Zero();
  Eigen::Matrix2d dsigma = Eigen::Matrix2d::Zero();
};

struct Basis2D {
  Eigen::Vector2d center;
  Eigen::Matrix2d width, precision;
  double norm;  // 1 / (2 pi sqrt(det S))
};

template <class T>
std::vector<Basis2D> prepare(const GaussianBasis2D<T>& basis) {
  std::vector<Basis2D> out(basis.size());
  for (std::size_t j = 0; j < basis.size(); ++j) {
    Basis2D& b = out[j];
    b.center = {basis.centers[2 * j], basis.centers[2 * j + 1]};
    b.width = to_matrix(std::array<T, 4>{basis.widths[4 * j], basis.widths[4 * j + 1],
                                         basis.widths[4 * j + 2], basis.widths[4 * j + 3]});
    b.width = symmetrised(b.width);
    b.precision = b.width.inverse();
    b.norm = 1 / (2 * kPi * std::sqrt(b.width.determinant()));
  }
  return out;
}

// What every pair of one density needs.
struct Density2DParts {
  double alpha, k, gamma, coefficient, rho_max, sqrt_det;
  Eigen::Vector2d mu;
  Eigen::Matrix2d sigma, inverse, root, root_inverse;
};

template <class T>
Density2DParts parts(double alpha, const Density2D<T>& density) {
  Density2DParts p;
  p.alpha = alpha;
  p.mu = {density.mu()[0], density.mu()[1]};
  p.sigma = to_matrix(density.sigma());
  p.inverse = p.sigma.inverse();
  p.sqrt_det = std::sqrt(p.sigma.determinant());
  p.gamma = elliptical_gamma(alpha);
  if (alpha > 1) {
    p.k = 1 / (alpha - 1);
    p.rho_max = std::sqrt(static_cast<double>(density.support_radius2()));
    p.coefficient = std::pow(0.5 * (alpha - 1) * p.rho_max * p.rho_max, p.k);  // ((alpha-1)(-tau))^k
    p.root = spd_sqrt(p.sigma);
    p.root_inverse = p.root.inverse();
  }
  return p;
}

Integrals2D gaussian(const Density2DParts& p, const Basis2D& psi) {
  const Eigen::Matrix2d v = p.sigma + psi.width, v_inverse = v.inverse();
  const Eigen::Vector2d d = psi.center - p.mu, vd = v_inverse * d;
  Integrals2D out;
  out.r = std::exp(-0.5 * d.dot(vd)) / (2 * kPi * std::sqrt(v.determinant()));
  out.dmu = out.r * vd;
  out.dsigma = 0.5 * out.r * (vd * vd.transpose() - v_inverse);
  return out;
}

// Number of trapezoid nodes for one pair (see the top of the file).
int angular_nodes(const Density2DParts& p, const Basis2D& psi, const Eigen::Vector2d& d) {
  const double s = std::sqrt(smallest_eigenvalue(p.root_inverse * psi.width * p.root_inverse));
  const double distance = std::sqrt(d.dot(p.inverse * d)), r = p.rho_max;
  const double rho_eff = std::sqrt(r * r + r * std::min(distance, r + 40 * s));
  const double n = std::ceil(8 * rho_eff / s / 8) * 8;
  return static_cast<int>(std::clamp(n, 32.0, 8192.0));
}

// One node of the angular rule: the direction e = Sigma^(1/2) (cos v, sin v), psi along the ray
// as exp(-(a rho^2 - 2 b rho + kappa)/2), and the log of psi's largest value on [0, rho_max].
struct Ray {
  Eigen::Vector2d e;
  double a, b, log_max;
};

Integrals2D beta_gaussian(const Density2DParts& p, const Basis2D& psi, std::vector<Ray>& rays) {
  const Eigen::Vector2d d = psi.center - p.mu;
  const double kappa = d.dot(psi.precision * d), r = p.rho_max;
  const int n = angular_nodes(p, psi, d);
  // First pass: every ray's Gaussian, and the largest value psi reaches on the disk. The unit
  // vectors (cos v_i, sin v_i) come from a rotation recurrence, restarted exactly every 32 nodes.
  rays.resize(static_cast<std::size_t>(n));
  const double step = 2 * kPi / n, c_step = std::cos(step), s_step = std::sin(step);
  double best = -std::numeric_limits<double>::infinity(), cv = 1, sv = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 32 == 0) {
      cv = std::cos(step * i);
      sv = std::sin(step * i);
    }
    Ray& ray = rays[static_cast<std::size_t>(i)];
    ray.e = p.root * Eigen::Vector2d(cv, sv);
    const Eigen::Vector2d pe = psi.precision * ray.e;
    ray.a = ray.e.dot(pe);
    ray.b = d.dot(pe);
    const double peak = std::clamp(ray.b / ray.a, 0.0, r);
    ray.log_max = -0.5 * (ray.a * peak * peak - 2 * ray.b * peak + kappa);
    best = std::max(best, ray.log_max);
    const double next = cv * c_step - sv * s_step;
    sv = sv * c_step + cv * s_step;
    cv = next;
  }
  double e0 = 0;
  Eigen::Vector2d e1 = Eigen::Vector2d::Zero();
  Eigen::Matrix2d e2 = Eigen::Matrix2d::Zero();
  const double scale = step * p.sqrt_det * p.coefficient * psi.norm * std::sqrt(2 * kPi);
  for (const Ray& ray : rays) {
    if (ray.log_max < best - kNegligible) continue;
    const double s = 1 / std::sqrt(ray.a), centre = ray.b / ray.a;
    const double log_f = -0.5 * std::max(0.0, kappa - ray.b * centre);
    const auto m = profile_moments(p.k, r, 0, r, centre, s);
    const double w = scale * s * std::exp(log_f);
    e0 += w * m[1];
    e1 += (w * m[2]) * ray.e;
    e2 += (w * m[3]) * (ray.e * ray.e.transpose());
  }
  Integrals2D out;
  out.r = e0;
  out.dmu = psi.precision * (d * e0 - e1);
  const Eigen::Matrix2d big_m = psi.precision * (d * e1.transpose() - e2);
  out.dsigma = 0.5 * (symmetrised(big_m * p.inverse) - p.gamma * big_m.trace() * p.inverse);
  return out;
}

template <class T>
void check_inputs(const char* fn, T alpha, std::span<const T> mu, std::span<const T> sigma,
                  const GaussianBasis2D<T>& basis) {
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  if (mu.size() % 2 != 0)
    fail("sparcon::", fn, ": mu has ", mu.size(), " entries, expected an even number (B x 2)");
  check_size(fn, "sigma", sigma, 2 * mu.size(), "4 * batch");
  check_basis(fn, basis);
  for (std::size_t b = 0; b < mu.size() / 2; ++b) {
    if (!std::isfinite(mu[2 * b]) || !std::isfinite(mu[2 * b + 1]))
      fail("sparcon::", fn, ": mu[", b, "] = (", mu[2 * b], ", ", mu[2 * b + 1], ") must be finite");
    symmetric_positive_definite(fn, "sigma", sigma.data() + 4 * b, static_cast<std::ptrdiff_t>(b));
  }
}

// Calls visit(b, j, integrals) for every pair, examples spread over the threads.
template <class T, class Visit>
void for_each_pair(T alpha, std::span<const T> mu, std::span<const T> sigma,
                   const GaussianBasis2D<T>& basis, Threads threads, const Visit& visit) {
  const std::vector<Basis2D> functions = prepare(basis);
  const std::size_t batch = mu.size() / 2;
  parallel_rows(example_rows(batch, basis.size()), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<Ray> rays;
    for (std::size_t b = begin; b < end; ++b) {
      const Eigen::Matrix2d s = symmetric_positive_definite("expectation_2d", "sigma", sigma.data() + 4 * b);
      const Density2D<double> density(alpha, {mu[2 * b], mu[2 * b + 1]}, to_array<double>(s));
      const Density2DParts p = parts(alpha, density);
      for (std::size_t j = 0; j < functions.size(); ++j)
        visit(b, j, alpha == 1 ? gaussian(p, functions[j]) : beta_gaussian(p, functions[j], rays));
    }
  });
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void expectation_2d(T alpha, std::span<const T> mu, std::span<const T> sigma,
                    const GaussianBasis2D<T>& basis, std::span<T> r, Threads threads) {
  const char* fn = "expectation_2d";
  detail::check_inputs(fn, alpha, mu, sigma, basis);
  const std::size_t n = basis.size();
  detail::check_size(fn, "r", r, mu.size() / 2 * n, "batch * basis.size()");
  detail::for_each_pair(alpha, mu, sigma, basis, threads, [&](std::size_t b, std::size_t j, const auto& i) {
    r[b * n + j] = static_cast<T>(i.r);
  });
}

template <std::floating_point T>
void expectation_2d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma,
                             const GaussianBasis2D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma, std::span<T> r,
                             Threads threads) {
  const char* fn = "expectation_2d_backward";
  detail::check_inputs(fn, alpha, mu, sigma, basis);
  const std::size_t n = basis.size(), batch = mu.size() / 2;
  detail::check_size(fn, "g", g, batch * n, "batch * basis.size()");
  detail::check_size(fn, "dmu", dmu, 2 * batch, "2 * batch");
  detail::check_size(fn, "dsigma", dsigma, 4 * batch, "4 * batch");
  if (!r.empty()) detail::check_size(fn, "r", r, batch * n, "batch * basis.size()");
  std::vector<Eigen::Vector2d> by_mu(batch, Eigen::Vector2d::Zero());
  std::vector<Eigen::Matrix2d> by_sigma(batch, Eigen::Matrix2d::Zero());
  detail::for_each_pair(alpha, mu, sigma, basis, threads, [&](std::size_t b, std::size_t j, const auto& i) {
    if (!r.empty()) r[b * n + j] = static_cast<T>(i.r);
    const double weight = g[b * n + j];
    by_mu[b] += weight * i.dmu;
    by_sigma[b] += weight * i.dsigma;
  });
  for (std::size_t b = 0; b < batch; ++b) {
    dmu[2 * b] = static_cast<T>(by_mu[b][0]);
    dmu[2 * b + 1] = static_cast<T>(by_mu[b][1]);
    const auto m = detail::to_array<T>(detail::symmetrised(by_sigma[b]));
    std::copy(m.begin(), m.end(), dsigma.begin() + 4 * b);
  }
}

template void expectation_2d(float, std::span<const float>, std::span<const float>,
                             const GaussianBasis2D<float>&, std::span<float>, Threads);
template void expectation_2d(double, std::span<const double>, std::span<const double>,
                             const GaussianBasis2D<double>&, std::span<double>, Threads);
template void expectation_2d_backward(float, std::span<const float>, std::span<const float>,
                                      const GaussianBasis2D<float>&, std::span<const float>,
                                      std::span<float>, std::span<float>, std::span<float>, Threads);
template void expectation_2d_backward(double, std::span<const double>, std::span<const double>,
                                      const GaussianBasis2D<double>&, std::span<const double>,
                                      std::span<double>, std::span<double>, std::span<double>,
                                      Threads);

}  // namespace sparcon
