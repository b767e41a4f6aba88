// Slow, independent references for the 2D continuous alpha-entmax densities and their
// expectations of 2D Gaussian basis functions (docs/math.md sections 6 and 7), in long double.
//
// Nothing here calls sparcon. The density is written from its definition,
//   p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1)),  f(t) = -1/2 (t - mu)^T Sigma^-1 (t - mu),
// (alpha = 1: p = exp(f - tau)). In whitened polar coordinates t = mu + L rho (cos v, sin v),
// L L^T = Sigma (Cholesky), f = -rho^2/2 and dt = sqrt(det Sigma) rho drho dv, so the mass is
// 2 pi sqrt(det Sigma) int_0^inf rho p(rho) drho, a 1D integral; tau is found by bisection on
// "mass = 1" with the adaptive G7-K15 quadrature of continuous_reference.h. Neither the closed
// form R of the beta-Gaussian nor the alpha = 2 formulas are used to build the reference.
//
// Expectations int p(t) w(t) psi(t) dt (psi = N(t; c, S), w a weight) are nested adaptive
// integrals in the same polar coordinates: the outer one over v in [v0 - pi, v0 + pi] (v0 the
// direction of the basis centre seen from mu, with breakpoints at the angular scales of psi),
// the inner one over rho, with breakpoints at the peak of psi along the ray and a few of its
// standard deviations either side. Near the support edge (rho > rho_max/2) the inner integral
// substitutes rho = rho_max (1 - s^2), which makes the edge behaviour (rho_max - rho)^(1/(alpha-1))
// a polynomial in s for alpha = 1.25, 1.5, 2, 3 (no endpoint singularity for the quadrature).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "continuous_reference.h"

namespace sparcon_test::cref2 {

using cref::kInf;
using cref::kPi;
using cref::LD;
using cref::QuadOptions;

using V2 = std::array<LD, 2>;
using M2 = std::array<LD, 4>;  ///< row-major {m00, m01, m10, m11}

inline LD det(const M2& m) { return m[0] * m[3] - m[1] * m[2]; }
inline M2 inverse(const M2& m) {
  const LD d = det(m);
  return {m[3] / d, -m[1] / d, -m[2] / d, m[0] / d};
}
inline M2 mul(const M2& a, const M2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
          a[2] * b[1] + a[3] * b[3]};
}
inline V2 apply(const M2& m, const V2& x) { return {m[0] * x[0] + m[1] * x[1], m[2] * x[0] + m[3] * x[1]}; }
inline LD quad_form(const M2& m, const V2& x, const V2& y) {  // x^T m y
  return x[0] * (m[0] * y[0] + m[1] * y[1]) + x[1] * (m[2] * y[0] + m[3] * y[1]);
}
/// Lower Cholesky factor of a symmetric positive definite matrix.
inline M2 cholesky(const M2& m) {
  const LD l00 = std::sqrt(m[0]);
  const LD l10 = m[2] / l00;
  const LD l11 = std::sqrt(m[3] - l10 * l10);
  return {l00, 0, l10, l11};
}
/// Eigenvalues of a symmetric matrix, smaller first.
inline V2 eigenvalues(const M2& m) {
  const LD mean = (m[0] + m[3]) / 2, half = (m[0] - m[3]) / 2;
  const LD rad = std::sqrt(half * half + m[1] * m[2]);
  return {mean - rad, mean + rad};
}
/// A rotated anisotropic symmetric matrix R(angle) diag(l0, l1) R(angle)^T.
inline M2 rotated(LD l0, LD l1, LD angle) {
  const LD c = std::cos(angle), s = std::sin(angle);
  return {c * c * l0 + s * s * l1, c * s * (l0 - l1), c * s * (l0 - l1), s * s * l0 + c * c * l1};
}

// ---- the density ---------------------------------------------------------------------------

/// base^(1/(alpha-1)) for base > 0 (0 otherwise); by multiplication when the exponent is a
/// small integer, by sqrt when it is 1/2 (the same value as std::pow to rounding, much faster).
inline LD entmax_power(LD alpha, LD base) {
  if (!(base > 0)) return 0;
  const LD e = 1 / (alpha - 1);
  if (e == std::floor(e) && e <= 16) {
    LD x = 1;
    for (int i = 0; i < static_cast<int>(e); ++i) x *= base;
    return x;
  }
  if (e == 0.5L) return std::sqrt(base);
  return std::pow(base, e);
}

/// Radial profile of the whitened density: p at whitened radius rho, straight from the
/// definition with f = -rho^2 / 2.
inline LD radial_pdf(LD alpha, LD tau, LD rho) {
  const LD f = -rho * rho / 2;
  if (alpha == 1) return std::exp(f - tau);
  return entmax_power(alpha, (alpha - 1) * (f - tau));
}

/// The same at rho = rho_max (1 - s^2), rho_max = sqrt(-2 tau), written without the
/// cancellation of f - tau near the edge: f - tau = (-tau) s^2 (2 - s^2).
inline LD radial_pdf_edge(LD alpha, LD tau, LD s) {
  return entmax_power(alpha, (alpha - 1) * (-tau) * s * s * (2 - s * s));
}

/// Whitened radius beyond which the Gaussian (alpha = 1) is treated as 0 (exp(-1152)).
inline constexpr LD kGaussianRho = 48;

/// int_0^rho_max rho^(k+1) p(rho) drho (the radial moment; k = 0 gives the mass over 2 pi
/// sqrt(det Sigma)), for a density of threshold tau: direct on [0, rho_max/2], with the
/// substitution rho = rho_max (1 - s^2) on [rho_max/2, rho_max].
inline LD radial_moment(LD alpha, LD tau, int k, LD rel_tol = 1e-17L) {
  QuadOptions opt;
  opt.rel_tol = rel_tol;
  opt.initial_panels = 4;
  if (alpha == 1) {
    return cref::integrate([&](LD rho) { return std::pow(rho, k + 1) * radial_pdf(alpha, tau, rho); }, 0,
                           kGaussianRho, {1, 2, 4, 8, 16}, opt);
  }
  if (tau >= 0) return 0;
  const LD rmax = std::sqrt(-2 * tau);
  const LD inner =
      cref::integrate([&](LD rho) { return std::pow(rho, k + 1) * radial_pdf(alpha, tau, rho); }, 0, rmax / 2, {}, opt);
  const LD edge = cref::integrate(
      [&](LD s) {
        const LD rho = rmax * (1 - s * s);
        return std::pow(rho, k + 1) * radial_pdf_edge(alpha, tau, s) * 2 * rmax * s;
      },
      0, std::sqrt(LD(0.5)), {}, opt);
  return inner + edge;
}

/// Mass of the density with threshold tau and sqrt(det Sigma) = sqrt_det.
inline LD mass(LD alpha, LD sqrt_det, LD tau) { return 2 * kPi * sqrt_det * radial_moment(alpha, tau, 0); }

/// Solves mass = 1 for tau (uncached).
inline LD solve_tau(LD alpha, LD sqrt_det) {
  if (alpha == 1) return std::log(mass(1, sqrt_det, 0));  // p = exp(f - tau)
  // the mass decreases in tau (pointwise), is 0 at tau = 0 and unbounded as tau -> -inf:
  // bracket the root in [lo, hi] with lo = 2 hi by doubling or halving, then bisect.
  LD lo = -1, hi = -1;
  if (mass(alpha, sqrt_det, lo) < 1) {
    while (mass(alpha, sqrt_det, lo) < 1) lo *= 2;
    hi = lo / 2;
  } else {
    while (mass(alpha, sqrt_det, hi) >= 1) hi /= 2;
    lo = hi * 2;
  }
  return cref::bisect_decreasing([&](LD tau) { return mass(alpha, sqrt_det, tau) - 1; }, lo, hi);
}

/// tau for (alpha, sqrt(det Sigma)), cached.
inline LD tau_of(LD alpha, LD sqrt_det) {
  static std::mutex m;
  static std::map<std::pair<LD, LD>, LD> cache;
  {
    const std::lock_guard<std::mutex> lock(m);
    const auto it = cache.find({alpha, sqrt_det});
    if (it != cache.end()) return it->second;
  }
  const LD tau = solve_tau(alpha, sqrt_det);
  const std::lock_guard<std::mutex> lock(m);
  cache[{alpha, sqrt_det}] = tau;
  return tau;
}

/// A reference density on the plane.
struct Density {
  LD alpha = 1;
  V2 mu{0, 0};
  M2 sigma{1, 0, 0, 1};  ///< symmetrised (mean of the off-diagonal entries)
  M2 sigma_inv{1, 0, 0, 1};
  M2 chol{1, 0, 0, 1};   ///< L, L L^T = sigma
  LD sqrt_det = 1;
  LD tau = 0;
  LD rho_max = kGaussianRho;  ///< whitened support radius sqrt(-2 tau); kGaussianRho for alpha = 1

  /// p(t) from the definition, f(t) = -1/2 (t - mu)^T Sigma^-1 (t - mu).
  [[nodiscard]] LD pdf(LD x, LD y) const {
    const V2 u{x - mu[0], y - mu[1]};
    const LD f = -quad_form(sigma_inv, u, u) / 2;
    if (alpha == 1) return std::exp(f - tau);
    const LD base = (alpha - 1) * (f - tau);
    return base > 0 ? std::pow(base, 1 / (alpha - 1)) : 0;
  }
  /// mu + L rho (cos v, sin v)
  [[nodiscard]] V2 point(LD rho, LD v) const {
    const V2 w = apply(chol, {std::cos(v), std::sin(v)});
    return {mu[0] + rho * w[0], mu[1] + rho * w[1]};
  }
  /// Covariance from the radial second moment: E[u u^T] = (E[rho^2]/2) Sigma (isotropy of the
  /// whitened density), E[rho^2] = 2 pi sqrt(det Sigma) int rho^3 p drho.
  [[nodiscard]] M2 covariance() const {
    const LD e_rho2 = 2 * kPi * sqrt_det * radial_moment(alpha, tau, 2);
    const LD k = e_rho2 / 2;
    return {k * sigma[0], k * sigma[1], k * sigma[2], k * sigma[3]};
  }
};

inline Density make_density(LD alpha, V2 mu, M2 sigma) {
  Density d;
  d.alpha = alpha;
  d.mu = mu;
  const LD off = (sigma[1] + sigma[2]) / 2;
  d.sigma = {sigma[0], off, off, sigma[3]};
  d.sigma_inv = inverse(d.sigma);
  d.chol = cholesky(d.sigma);
  d.sqrt_det = d.chol[0] * d.chol[3];
  d.tau = tau_of(alpha, d.sqrt_det);
  d.rho_max = alpha == 1 ? kGaussianRho : std::sqrt(-2 * d.tau);
  return d;
}

// ---- Gaussian basis functions --------------------------------------------------------------

/// psi(t) = N(t; c, S).
struct Gaussian {
  V2 c{0, 0};
  M2 S{1, 0, 0, 1};
  M2 S_inv{1, 0, 0, 1};
  LD norm = 1 / (2 * kPi);  ///< 1 / (2 pi sqrt(det S))

  [[nodiscard]] LD operator()(LD x, LD y) const {
    const V2 z{x - c[0], y - c[1]};
    return norm * std::exp(-quad_form(S_inv, z, z) / 2);
  }
};

inline Gaussian make_gaussian(V2 c, M2 S) {
  Gaussian g;
  g.c = c;
  const LD off = (S[1] + S[2]) / 2;
  g.S = {S[0], off, off, S[3]};
  g.S_inv = inverse(g.S);
  g.norm = 1 / (2 * kPi * std::sqrt(det(g.S)));
  return g;
}

/// N(x; m, C) in long double (the alpha = 1 closed form r = N(mu; c, Sigma + S)).
inline LD gaussian_pdf(V2 x, V2 m, M2 C) {
  const V2 z{x[0] - m[0], x[1] - m[1]};
  const LD off = (C[1] + C[2]) / 2;
  const M2 Cs{C[0], off, off, C[3]};
  return std::exp(-quad_form(inverse(Cs), z, z) / 2) / (2 * kPi * std::sqrt(det(Cs)));
}

// ---- expectations ----------------------------------------------------------------------------

namespace detail {

/// One nested polar integral of p w psi over the plane, with the options `inner` on each ray's
/// integral over rho and `outer` on the integral over v (see expect).
template <class W>
LD polar_integral(const Density& p, const Gaussian* psi, const W& weight, QuadOptions inner_opt,
                  QuadOptions outer_opt) {
  const LD R = p.rho_max;
  const M2 Linv = inverse(p.chol);
  LD v0 = 0, d = 0, s = 1;
  if (psi != nullptr) {
    // psi in whitened coordinates: centre cw, covariance W = L^-1 S L^-T (largest eigenvalue s^2)
    const V2 cw = apply(Linv, {psi->c[0] - p.mu[0], psi->c[1] - p.mu[1]});
    d = std::hypot(cw[0], cw[1]);
    v0 = d > 0 ? std::atan2(cw[1], cw[0]) : 0;
    const M2 Lt_inv{Linv[0], Linv[2], Linv[1], Linv[3]};
    s = std::sqrt(eigenvalues(mul(mul(Linv, psi->S), Lt_inv))[1]);
    // every point of the support is more than 40 standard deviations of psi from its centre:
    // psi < its peak * exp(-800) there, far below the smallest double
    if (d - R > 40 * s) return 0;
  }
  std::vector<LD> vbreaks;
  if (psi != nullptr && d > 0) {
    // the angular extent of psi seen from mu
    vbreaks.push_back(v0);
    for (const LD k : {1.0L, 4.0L, 16.0L}) {
      const LD dv = std::atan2(k * s, d);
      vbreaks.push_back(v0 - dv);
      vbreaks.push_back(v0 + dv);
    }
  }
  inner_opt.initial_panels = 1;
  const bool edge_substitution = p.alpha != 1;
  auto ray = [&](LD v) -> LD {
    const V2 e = apply(p.chol, {std::cos(v), std::sin(v)});  // t = mu + rho e
    LD lo = 0, hi = R;
    std::vector<LD> rbreaks;
    if (psi != nullptr) {
      // along the ray (t - c)^T S^-1 (t - c) = a (rho - rho_star)^2 + const
      const V2 cm{psi->c[0] - p.mu[0], psi->c[1] - p.mu[1]};
      const LD a = quad_form(psi->S_inv, e, e), b = quad_form(psi->S_inv, e, cm);
      const LD rho_star = b / a, sd = 1 / std::sqrt(a);
      lo = std::max(lo, rho_star - 40 * sd);
      hi = std::min(hi, rho_star + 40 * sd);
      for (const LD k : {0.0L, 2.0L, 6.0L}) {
        rbreaks.push_back(rho_star - k * sd);
        rbreaks.push_back(rho_star + k * sd);
      }
    }
    if (!(hi > lo)) return 0;
    auto integrand = [&](LD rho, LD density) {
      const LD x = p.mu[0] + rho * e[0], y = p.mu[1] + rho * e[1];
      const LD ps = psi != nullptr ? (*psi)(x, y) : LD(1);
      return rho * density * weight(x, y) * ps;
    };
    const LD split = edge_substitution ? R / 2 : R;
    LD sum = 0;
    if (lo < split) {
      sum += cref::integrate([&](LD rho) { return integrand(rho, radial_pdf(p.alpha, p.tau, rho)); }, lo,
                             std::min(hi, split), rbreaks, inner_opt);
    }
    if (edge_substitution && hi > split) {
      // rho = R (1 - s^2), drho = -2 R s ds; s from sqrt(1 - hi/R) to sqrt(1 - max(lo, R/2)/R)
      const LD s_lo = std::sqrt(std::max(LD(0), 1 - hi / R)), s_hi = std::sqrt(1 - std::max(lo, split) / R);
      std::vector<LD> sbreaks;
      for (const LD rb : rbreaks)
        if (rb > 0 && rb < R) sbreaks.push_back(std::sqrt(1 - rb / R));
      sum += cref::integrate(
          [&](LD sv) {
            const LD rho = R * (1 - sv * sv);
            return integrand(rho, radial_pdf_edge(p.alpha, p.tau, sv)) * 2 * R * sv;
          },
          s_lo, s_hi, sbreaks, inner_opt);
    }
    return sum;
  };
  outer_opt.initial_panels = 1;
  return p.sqrt_det * cref::integrate(ray, v0 - kPi, v0 + kPi, vbreaks, outer_opt);
}

}  // namespace detail

/// int p(t) w(t) psi(t) dt (psi may be null: int p w). opt.rel_tol applies at both levels
/// (each ray's integral over rho relative to itself, the integral over v relative to itself);
/// opt.abs_tol is an absolute floor on the error of the whole integral (shared out over the
/// rays), which makes entries far below the scale of interest cheap.
template <class W>
LD expect(const Density& p, const Gaussian* psi, const W& weight, QuadOptions opt = {}) {
  QuadOptions inner = opt, outer = opt;
  inner.abs_tol = opt.abs_tol / (4 * 2 * kPi * p.sqrt_det);  // the rays' errors add up over 2 pi
  outer.abs_tol = opt.abs_tol / 2;
  return detail::polar_integral(p, psi, weight, inner, outer);
}

/// An upper bound on E_p[psi] for alpha > 1: the largest value of psi on the support, bounded
/// with the whitened distance from the centre of psi to the support (see polar_integral).
inline LD upper_bound(const Density& p, const Gaussian& psi) {
  const M2 Linv = inverse(p.chol);
  const V2 cw = apply(Linv, {psi.c[0] - p.mu[0], psi.c[1] - p.mu[1]});
  const M2 Lt_inv{Linv[0], Linv[2], Linv[1], Linv[3]};
  const LD s = std::sqrt(eigenvalues(mul(mul(Linv, psi.S), Lt_inv))[1]);
  const LD gap = std::max(LD(0), std::hypot(cw[0], cw[1]) - p.rho_max) / s;
  return psi.norm * std::exp(-gap * gap / 2);
}

inline LD expect(const Density& p, const Gaussian& psi, QuadOptions opt = {}) {
  return expect(p, &psi, [](LD, LD) { return LD(1); }, opt);
}

/// One reference entry: the value and a bound on its error from skipping (0 when computed).
struct Entry {
  LD value = 0;
  LD skipped_bound = 0;  ///< > 0: not integrated, |E_p[psi]| <= skipped_bound
};

/// A row of the reference, r_j = E_p[psi_j] for every basis function: computed in the order of
/// decreasing upper_bound, with the absolute floor floor_rel * (the largest r_j so far, a lower
/// bound on the row max) and relative tolerance rel_tol; entries whose upper bound is below
/// skip_rel * (that row max) are not integrated (alpha > 1 only).
inline std::vector<Entry> reference_row(const Density& p, const std::vector<Gaussian>& basis, LD rel_tol,
                                        LD floor_rel, LD skip_rel) {
  std::vector<Entry> row(basis.size());
  std::vector<std::pair<LD, std::size_t>> order;
  for (std::size_t j = 0; j < basis.size(); ++j)
    order.emplace_back(p.alpha == 1 ? basis[j].norm : upper_bound(p, basis[j]), j);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  LD row_max = 0;
  for (const auto& [bound, j] : order) {
    if (p.alpha != 1 && bound < skip_rel * row_max) {
      row[j].skipped_bound = bound;
      continue;
    }
    QuadOptions opt;
    opt.rel_tol = rel_tol;
    opt.abs_tol = floor_rel * row_max;
    row[j].value = expect(p, basis[j], opt);
    row_max = std::max(row_max, std::fabs(row[j].value));
  }
  return row;
}

/// reference_row for several densities, spread over two threads (the rows are independent).
inline std::vector<std::vector<Entry>> reference_rows(const std::vector<Density>& densities,
                                                      const std::vector<Gaussian>& basis, LD rel_tol, LD floor_rel,
                                                      LD skip_rel) {
  std::vector<std::vector<Entry>> rows(densities.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t b = next++; b < densities.size(); b = next++)
      rows[b] = reference_row(densities[b], basis, rel_tol, floor_rel, skip_rel);
  };
  std::thread helper(work);
  work();
  helper.join();
  return rows;
}

}  // namespace sparcon_test::cref2
