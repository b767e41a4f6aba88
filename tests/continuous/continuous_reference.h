// Slow, independent references for the 1D continuous alpha-entmax densities and their
// expectations of Gaussian basis functions (docs/math.md sections 6 and 7), in long double.
//
// Nothing here calls sparcon. The density is written from its definition,
//   p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1)),  f(t) = -(t - mu)^2 / (2 sigma2),
// (alpha = 1: p = exp(f - tau)), and tau is found by bisection on "int p = 1", the integral taken
// by an adaptive Gauss-Kronrod (G7-K15) quadrature with a 1e-15 relative tolerance. Neither the
// closed-form R of the beta-Gaussian nor the alpha = 2 formula a = (3 sigma2/2)^(1/3) is used to
// build the reference (the tests check the library against those separately).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

namespace sparcon_test::cref {

using LD = long double;
inline constexpr LD kInf = std::numeric_limits<LD>::infinity();
inline constexpr LD kPi = 3.141592653589793238462643383279502884L;

// ---- adaptive Gauss-Kronrod quadrature -----------------------------------------------------

namespace detail {

// Nodes and weights of the 15-point Kronrod rule and its embedded 7-point Gauss rule on [-1, 1]
// (QUADPACK qk15, to 33 digits). The reference self-tests check exactness on polynomials.
inline constexpr LD kXgk[8] = {
    0.991455371120812639206854697526329L, 0.949107912342758524526189684047851L,
    0.864864423359769072789712788640926L, 0.741531185599394439863864773280788L,
    0.586087235467691130294144845693013L, 0.405845151377397166906606412076961L,
    0.207784955007898467600689403773245L, 0.000000000000000000000000000000000L};
inline constexpr LD kWgk[8] = {
    0.022935322010529224963732008058970L, 0.063092092629978553290700663189204L,
    0.104790010322250183839876322541518L, 0.140653259715525918745189590510238L,
    0.169004726639267902826583426598550L, 0.190350578064785409913256402421014L,
    0.204432940075298892414161999234649L, 0.209482141084727828012999174891714L};
inline constexpr LD kWg[4] = {0.129484966168869693270611432679082L, 0.279705391489276667901467771423780L,
                              0.381830050505118944950369775488975L, 0.417959183673469387755102040816327L};

struct Panel {
  LD kronrod;  ///< K15 estimate
  LD error;    ///< |K15 - G7|
  LD abs;      ///< K15 estimate of the integral of |f|
};

template <class F>
Panel gk15(const F& f, LD a, LD b) {
  const LD c = (a + b) / 2, h = (b - a) / 2;
  const LD fc = f(c);
  LD k = kWgk[7] * fc, g = kWg[3] * fc, ab = kWgk[7] * std::fabs(fc);
  for (int i = 0; i < 7; ++i) {
    const LD x = h * kXgk[i];
    const LD f1 = f(c - x), f2 = f(c + x);
    k += kWgk[i] * (f1 + f2);
    ab += kWgk[i] * (std::fabs(f1) + std::fabs(f2));
    if (i % 2 == 1) g += kWg[i / 2] * (f1 + f2);  // Gauss nodes are the odd Kronrod nodes
  }
  return {k * h, std::fabs((k - g) * h), ab * std::fabs(h)};
}

}  // namespace detail

/// Options of `integrate`.
struct QuadOptions {
  LD rel_tol = 1e-15L;   ///< relative to the integral of |f| over the whole range
  LD abs_tol = 0;        ///< absolute floor on the tolerance
  int max_panels = 4000; ///< subdivisions at most (the answer is then the best so far)
  int initial_panels = 4;
};

/// Integral of f over [a, b] (a <= b, both finite), with interior breakpoints `breaks` (those
/// outside (a, b) are ignored). Globally adaptive G7-K15 (QUADPACK's qag strategy): the panel
/// with the largest error estimate |K15 - G7| is bisected until the sum of the estimates is below
/// max(rel_tol * int |f|, abs_tol). Endpoint singularities of the derivative (the edge of a
/// beta-Gaussian with alpha > 2) cost a few dozen bisections. A feature much narrower than its
/// initial panel that falls between the Kronrod nodes is invisible: callers put breakpoints at
/// the features (see `expect`).
template <class F>
LD integrate(const F& f, LD a, LD b, std::vector<LD> breaks = {}, QuadOptions opt = {}) {
  if (!(b > a)) return 0;
  std::vector<LD> pts{a};
  std::sort(breaks.begin(), breaks.end());
  for (LD x : breaks)
    if (x > pts.back() && x < b) pts.push_back(x);
  pts.push_back(b);
  struct Item {
    LD lo, hi;
    detail::Panel p;
    bool operator<(const Item& o) const { return p.error < o.p.error; }
  };
  std::vector<Item> heap;
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    const LD lo = pts[i], hi = pts[i + 1];
    for (int k = 0; k < opt.initial_panels; ++k) {
      const LD x0 = lo + (hi - lo) * k / opt.initial_panels;
      const LD x1 = k + 1 == opt.initial_panels ? hi : lo + (hi - lo) * (k + 1) / opt.initial_panels;
      heap.push_back({x0, x1, detail::gk15(f, x0, x1)});
    }
  }
  std::make_heap(heap.begin(), heap.end());
  LD abs_total = 0;
  for (const Item& it : heap) abs_total += it.p.abs;
  const LD tol = std::max(opt.rel_tol * abs_total, opt.abs_tol);
  auto error_sum = [&] {
    LD e = 0;
    for (const Item& it : heap) e += it.p.error;
    return e;
  };
  LD err = error_sum();
  for (int n = 0; n < opt.max_panels && err > tol; ++n) {
    std::pop_heap(heap.begin(), heap.end());
    Item worst = heap.back();
    heap.pop_back();
    const LD m = (worst.lo + worst.hi) / 2;
    if (!(m > worst.lo && m < worst.hi) || worst.p.error == 0) {  // cannot improve: freeze
      worst.p.error = 0;
      heap.push_back(worst);
      std::push_heap(heap.begin(), heap.end());
      err = error_sum();
      continue;
    }
    Item left{worst.lo, m, detail::gk15(f, worst.lo, m)}, right{m, worst.hi, detail::gk15(f, m, worst.hi)};
    err += left.p.error + right.p.error - worst.p.error;
    heap.push_back(left);
    std::push_heap(heap.begin(), heap.end());
    heap.push_back(right);
    std::push_heap(heap.begin(), heap.end());
    if (n % 64 == 63) err = error_sum();  // no drift from the running update
  }
  LD sum = 0;
  for (const Item& it : heap) sum += it.p.kronrod;
  return sum;
}

/// Bisection for the root of a decreasing function g on [lo, hi] with g(lo) >= 0 >= g(hi),
/// until the interval stops shrinking in long double.
inline LD bisect_decreasing(const std::function<LD(LD)>& g, LD lo, LD hi) {
  for (int it = 0; it < 400; ++it) {
    const LD mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) break;
    if (g(mid) > 0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo + (hi - lo) / 2;
}

// ---- the density ---------------------------------------------------------------------------

/// p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1)) (alpha > 1) or exp(f(t) - tau) (alpha = 1),
/// f(t) = -(t - mu)^2 / (2 sigma2), straight from the definition.
inline LD entmax_pdf(LD alpha, LD mu, LD sigma2, LD tau, LD t) {
  const LD f = -(t - mu) * (t - mu) / (2 * sigma2);
  if (alpha == 1) return std::exp(f - tau);
  const LD base = (alpha - 1) * (f - tau);
  return base > 0 ? std::pow(base, 1 / (alpha - 1)) : 0;
}

/// A reference density: tau by bisection on int p = 1; the support is where f(t) > tau, i.e.
/// |t - mu| < sqrt(-2 tau sigma2) (alpha > 1), which is also how half_width is defined here.
struct Density {
  LD alpha = 1, mu = 0, sigma2 = 1;
  LD tau = 0;
  LD half_width = kInf;  ///< +inf for alpha = 1

  [[nodiscard]] LD pdf(LD t) const { return entmax_pdf(alpha, mu, sigma2, tau, t); }
  /// Integration range: the support, or mu +- 40 standard deviations for the Gaussian (the
  /// mass left out is below exp(-800)).
  [[nodiscard]] LD lo() const { return alpha == 1 ? mu - 40 * std::sqrt(sigma2) : mu - half_width; }
  [[nodiscard]] LD hi() const { return alpha == 1 ? mu + 40 * std::sqrt(sigma2) : mu + half_width; }
};

/// Mass of the centred density (mu = 0) with threshold tau: int over the set f > tau.
inline LD mass(LD alpha, LD sigma2, LD tau) {
  if (alpha == 1) {
    const LD r = 40 * std::sqrt(sigma2);
    return integrate([&](LD t) { return entmax_pdf(alpha, 0, sigma2, tau, t); }, -r, r, {0});
  }
  if (tau >= 0) return 0;
  const LD a = std::sqrt(-2 * tau * sigma2);
  // symmetric: twice the integral over [0, a]
  return 2 * integrate([&](LD t) { return entmax_pdf(alpha, 0, sigma2, tau, t); }, 0, a);
}

/// Solves int p = 1 for tau (uncached).
inline LD solve_tau(LD alpha, LD sigma2) {
  if (alpha == 1) {
    // p = exp(f - tau): int p = exp(-tau) int exp(f) = 1
    return std::log(mass(1, sigma2, 0));
  }
  // mass(tau) decreases in tau (the integrand does, pointwise), is 0 at tau = 0 and grows
  // without bound as tau -> -inf: bracket [lo, 0] by doubling.
  LD lo = -1;
  while (mass(alpha, sigma2, lo) < 1) lo *= 2;
  return bisect_decreasing([&](LD tau) { return mass(alpha, sigma2, tau) - 1; }, lo, 0);
}

/// tau for (alpha, sigma2), cached (it does not depend on mu).
inline LD tau_of(LD alpha, LD sigma2) {
  static std::mutex m;
  static std::map<std::pair<LD, LD>, LD> cache;
  {
    const std::lock_guard<std::mutex> lock(m);
    const auto it = cache.find({alpha, sigma2});
    if (it != cache.end()) return it->second;
  }
  const LD tau = solve_tau(alpha, sigma2);
  const std::lock_guard<std::mutex> lock(m);
  cache[{alpha, sigma2}] = tau;
  return tau;
}

inline Density make_density(LD alpha, LD mu, LD sigma2) {
  Density d;
  d.alpha = alpha;
  d.mu = mu;
  d.sigma2 = sigma2;
  d.tau = tau_of(alpha, sigma2);
  d.half_width = alpha == 1 ? kInf : std::sqrt(-2 * d.tau * sigma2);
  return d;
}

// ---- expectations of Gaussian basis functions ----------------------------------------------

inline LD gaussian(LD t, LD center, LD width) {
  const LD z = t - center;
  return std::exp(-z * z / (2 * width)) / std::sqrt(2 * kPi * width);
}

/// int_S p(t) * w(t) * N(t; center, width) dt over the support of p, with w a weight (1 for the
/// expectation itself); the range is cut to center +- 40 standard deviations of the basis
/// function (the part left out is below exp(-800) of the peak), with breakpoints at mu, center
/// and the support edges.
template <class W>
LD expect(const Density& p, LD center, LD width, const W& weight, QuadOptions opt = {}) {
  const LD s = std::sqrt(width);
  const LD lo = std::max(p.lo(), center - 40 * s), hi = std::min(p.hi(), center + 40 * s);
  if (!(hi > lo)) return 0;
  return integrate([&](LD t) { return p.pdf(t) * weight(t) * gaussian(t, center, width); }, lo, hi,
                   {p.mu, center, center - s, center + s, p.mu - p.half_width, p.mu + p.half_width}, opt);
}

inline LD expect(const Density& p, LD center, LD width) {
  return expect(p, center, width, [](LD) { return LD(1); });
}

/// int_S w(t) N(t; center, width) dt over the support S of p (no density factor), for the direct
/// gradient formulas of docs/math.md section 7; same range and breakpoints as `expect`.
template <class W>
LD support_integral(const Density& p, LD center, LD width, const W& weight, QuadOptions opt = {}) {
  const LD s = std::sqrt(width);
  const LD lo = std::max(p.lo(), center - 40 * s), hi = std::min(p.hi(), center + 40 * s);
  if (!(hi > lo)) return 0;
  return integrate([&](LD t) { return weight(t) * gaussian(t, center, width); }, lo, hi,
                   {p.mu, center, center - s, center + s}, opt);
}

// ---- comparison helpers --------------------------------------------------------------------

/// |got - want| <= rel * |want| + abs, with a readable failure.
inline bool close(LD got, LD want, LD rel, LD abs = 0) {
  return std::fabs(got - want) <= rel * std::fabs(want) + abs;
}

inline LD rel_err(LD got, LD want) {
  return want == 0 ? std::fabs(got) : std::fabs(got - want) / std::fabs(want);
}

}  // namespace sparcon_test::cref
