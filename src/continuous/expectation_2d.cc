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
//   share is below 1e-15 of r even when the best ray peaks at the edge of the support). (With
//   7 rho_eff / s nodes the hardest test, BasisFunctionsAtTheMean, is 2e-11 off and with 6 it
//   fails the 1e-10 contract, against 2e-13 with 8: 8 stays.)
//   Pairs whose r is provably below 1e-17 of the largest r of their density are not integrated
//   at all (sparse_pairs below): r and gradients 0.
// alpha = 2 and 1.5 integrate over chords of the disk instead of rays (beta_gaussian_chords
// below: about half the nodes, the same closed form per node). The rays of a pair are evaluated
// several at a time by the SIMD kernel of ray_kernels.h, the chords by that of chord_kernels.h,
// the unit vectors from a table per n. The last few forward calls keep their pairs' integrals, which
// a backward call on the same inputs reuses (SavedCall below).
// Everything is computed in double, whatever T.
#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <numbers>
#include <unordered_map>
#include <utility>
#include <vector>

#include "check.h"
#include "continuous/batch.h"
#include "continuous/checks.h"
#include "continuous/chord_kernels.h"
#include "continuous/matrix2.h"
#include "continuous/pair_frames.h"
#include "continuous/ray_kernels.h"
#include "parallel_rows.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

constexpr double kPi = std::numbers::pi;

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

// The basis of a call, as Basis2D and as the arrays of simd::pair_frames (padded to a multiple of
// 64 entries with S = I at the origin).
struct PreparedBasis {
  std::vector<Basis2D> functions;
  std::vector<double> c0, c1, p00, p01, p11, det_p;

  simd::BasisArrays arrays() const {
    return {c0.data(), c1.data(), p00.data(), p01.data(), p11.data(), det_p.data(), functions.size()};
  }
};

constexpr std::size_t padded_to_64(std::size_t n) { return (n + 63) / 64 * 64; }

template <class T>
PreparedBasis prepare(const GaussianBasis2D<T>& basis) {
  PreparedBasis out;
  out.functions.resize(basis.size());
  const std::size_t padded = padded_to_64(basis.size());
  for (auto* v : {&out.c0, &out.c1, &out.p01}) v->assign(padded, 0.0);
  for (auto* v : {&out.p00, &out.p11, &out.det_p}) v->assign(padded, 1.0);
  for (std::size_t j = 0; j < basis.size(); ++j) {
    Basis2D& b = out.functions[j];
    b.center = {basis.centers[2 * j], basis.centers[2 * j + 1]};
    b.width = to_matrix(std::array<T, 4>{basis.widths[4 * j], basis.widths[4 * j + 1],
                                         basis.widths[4 * j + 2], basis.widths[4 * j + 3]});
    b.width = symmetrised(b.width);
    b.precision = b.width.inverse();
    b.norm = 1 / (2 * kPi * std::sqrt(b.width.determinant()));
    out.c0[j] = b.center[0];
    out.c1[j] = b.center[1];
    out.p00[j] = b.precision(0, 0);
    out.p01[j] = 0.5 * (b.precision(0, 1) + b.precision(1, 0));
    out.p11[j] = b.precision(1, 1);
    out.det_p[j] = 1 / b.width.determinant();
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

// The unit vectors (cos v_i, sin v_i), v_i = 2 pi i / n, of an n-node rule, padded with (1, 0) to
// a multiple of 64 entries (ray_kernels.h reads whole vectors): built once per n and thread and
// kept, up to 2^20 entries in all per thread (the cache starts afresh beyond).
struct UnitCircle {
  std::vector<double> cos, sin;
};

const UnitCircle& unit_circle(std::size_t n) {
  static thread_local std::unordered_map<std::size_t, UnitCircle> tables;
  static thread_local std::size_t entries = 0;
  if (const auto it = tables.find(n); it != tables.end()) return it->second;
  const std::size_t padded = (n + 63) / 64 * 64;
  if (entries + padded > (std::size_t{1} << 20)) {
    tables.clear();
    entries = 0;
  }
  UnitCircle& t = tables[n];
  t.cos.assign(padded, 1.0);
  t.sin.assign(padded, 0.0);
  const double step = 2 * kPi / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.cos[i] = std::cos(step * static_cast<double>(i));
    t.sin[i] = std::sin(step * static_cast<double>(i));
  }
  entries += padded;
  return t;
}

// r and its gradients from E0, E1, E2 (see the top of the file).
Integrals2D gradients(const Density2DParts& p, const Basis2D& psi, const Eigen::Vector2d& d, double e0,
                      const Eigen::Vector2d& e1, const Eigen::Matrix2d& e2) {
  Integrals2D out;
  out.r = e0;
  out.dmu = psi.precision * (d * e0 - e1);
  const Eigen::Matrix2d big_m = psi.precision * (d * e1.transpose() - e2);
  out.dsigma = 0.5 * (symmetrised(big_m * p.inverse) - p.gamma * big_m.trace() * p.inverse);
  return out;
}

// With e = Sigma^(1/2) u along the ray of unit direction u: a = e^T P e = u^T A u with
// A = Sigma^(1/2) P Sigma^(1/2), b = e^T P d = beta . u with beta = Sigma^(1/2) P d; the rays' sums
// (ray_kernels.h) of w P_2 u and w P_3 u u^T give E1 and E2 through e = Sigma^(1/2) u.
Integrals2D beta_gaussian_rays(const Density2DParts& p, const Basis2D& psi) {
  const Eigen::Vector2d d = psi.center - p.mu;
  const double kappa = d.dot(psi.precision * d);
  const std::size_t n = static_cast<std::size_t>(angular_nodes(p, psi, d));
  const UnitCircle& circle = unit_circle(n);
  const Eigen::Matrix2d a = p.root * psi.precision * p.root;
  const Eigen::Vector2d beta = p.root * (psi.precision * d);
  const double step = 2 * kPi / static_cast<double>(n);
  simd::RayPair pair;
  pair.cos = circle.cos.data();
  pair.sin = circle.sin.data();
  pair.n = n;
  pair.a00 = a(0, 0);
  pair.a01 = 0.5 * (a(0, 1) + a(1, 0));
  pair.a11 = a(1, 1);
  pair.b0 = beta[0];
  pair.b1 = beta[1];
  pair.kappa = kappa;
  pair.radius = p.rho_max;
  pair.k = p.k;
  pair.scale = step * p.sqrt_det * p.coefficient * psi.norm * std::sqrt(2 * kPi);
  const simd::RaySums sums = simd::ray_sums(pair);
  const double e0 = sums.e0;
  const Eigen::Vector2d e1 = p.root * Eigen::Vector2d(sums.e1[0], sums.e1[1]);
  Eigen::Matrix2d uu;
  uu << sums.e2[0], sums.e2[1], sums.e2[1], sums.e2[2];
  const Eigen::Matrix2d e2 = p.root * uu * p.root;
  return gradients(p, psi, d, e0, e1, e2);
}

// One pair in whitened coordinates rotated to the principal axes of psi's width there: with
// (x, y) = frame^T Sigma^(-1/2) (t - mu), psi is a Gaussian of centre m = frame^T Sigma^(-1/2) d
// and covariance diag(s_long^2, s_short^2) (s_long >= s_short), and the support is the disk
// x^2 + y^2 <= rho_max^2 (simd::pair_frames computes it for every basis function of a density).
struct WhitenedPsi {
  Eigen::Matrix2d frame;  // columns: the long axis, the short axis
  Eigen::Vector2d m;
  double s_long, s_short;
};

// alpha = 2 and 1.5 (k = 1, 2): the same integrals over chords of the disk instead of rays. In
// whitened coordinates u = Sigma^(-1/2) (t - mu) rotated to the principal axes of psi's whitened
// width C = Sigma^(-1/2) S Sigma^(-1/2) (x along its long axis, standard deviation s_long; y along
// the short one, s_short), psi = norm exp(-(x - m1)^2 / (2 s_long^2) - (y - m2)^2 / (2 s_short^2))
// separates, and with y = R cos v, w = R sin v the disk is the chords [-w, w] for v in (0, pi):
//   E_f = sqrt(det Sigma) C norm int_0^pi w dv exp(-(y - m2)^2 / (2 s_short^2))
//         int_{-w}^{w} ((w^2 - x^2) / R^2)^k f(x, y) exp(-(x - m1)^2 / (2 s_long^2)) dx,
// whose inner integral is sqrt(2 pi) s_long (w/R)^(2k) times profile_moments(k, w, -w, w, m1,
// s_long) (chord_kernels.h). Continued past v = pi the outer integrand is entire and even in v
// (the inner one is an integral of an entire function between -w and w), so the trapezoid rule
// v_i = pi i / half, i = 1..half-1, converges geometrically, at a rate set by psi's width across
// the chords: half = 5 R / s_short + 16 (rounded up to even, at most 8192) was within 1.3e-15 of
// the row's largest r on the benchmark's densities and needed at most 0.81 of itself on 98
// adversarial pairs (bench/chords_2d_study.py, BENCHMARKS.md Part 16), and evaluates about half
// the nodes the rays do (the rays' n comes from the angular width of psi seen from mu, which a
// pair near the edge makes small, where the chords' half depends on s_short alone).
Integrals2D beta_gaussian_chords(const Density2DParts& p, const Basis2D& psi, const WhitenedPsi& w) {
  const double radius = p.rho_max;
  const double half = std::min(8192.0, 2 * std::ceil((5 * radius / w.s_short + 16) / 2));
  const std::size_t n = static_cast<std::size_t>(2 * half);
  const UnitCircle& circle = unit_circle(n);  // v_i = 2 pi i / n = pi i / half
  simd::ChordPair pair;
  pair.cos = circle.cos.data() + 1;
  pair.sin = circle.sin.data() + 1;
  pair.n = static_cast<std::size_t>(half) - 1;
  pair.m1 = w.m[0];
  pair.m2 = w.m[1];
  pair.s_long = w.s_long;
  pair.s_short = w.s_short;
  pair.radius = radius;
  pair.k = static_cast<int>(p.k);
  pair.scale = kPi / half * p.sqrt_det * p.coefficient * psi.norm * std::sqrt(2 * kPi) * w.s_long;
  const simd::ChordSums sums = simd::chord_sums(pair);
  // Back from the rotated whitened frame: t - mu = Sigma^(1/2) frame (x, y).
  const Eigen::Matrix2d to_t = p.root * w.frame;
  const double e0 = sums.e0;
  const Eigen::Vector2d e1 = to_t * Eigen::Vector2d(sums.e1[0], sums.e1[1]);
  Eigen::Matrix2d xy;
  xy << sums.e2[0], sums.e2[1], sums.e2[1], sums.e2[2];
  const Eigen::Matrix2d e2 = to_t * xy * to_t.transpose();
  return gradients(p, psi, psi.center - p.mu, e0, e1, e2);
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

// Pairs whose r is provably below this fraction of the row's largest r are not integrated.
constexpr double kNegligible = 1e-17;

// Scratch of one thread: the frames of a density's pairs and their order.
struct PairScratch {
  std::vector<double> cos, sin, m1, m2, s_long, s_short, log_bound;
  std::vector<std::pair<double, std::size_t>> order;
  std::vector<Integrals2D> row;

  simd::PairFrames frames(std::size_t n) {
    const std::size_t padded = padded_to_64(n);
    for (auto* v : {&cos, &sin, &m1, &m2, &s_long, &s_short, &log_bound})
      if (v->size() < padded) v->resize(padded);
    return {cos.data(), sin.data(), m1.data(), m2.data(), s_long.data(), s_short.data(), log_bound.data()};
  }
};

// The integrals of every pair of one density at alpha > 1, into scratch.row (N entries). The
// pairs are integrated by decreasing upper bound of log r (simd::pair_frames); once a bound falls
// below kNegligible of the largest r found so far, that pair and all after it get r = 0 and zero
// gradients: their true r is below 1e-17 of the row's largest (the suites hold r to 1e-10 of
// it), their gradients below |S^-1| (|d| + the support's reach) times that.
void sparse_pairs(const Density2DParts& p, const PreparedBasis& basis, PairScratch& scratch) {
  const std::size_t n = basis.functions.size();
  simd::DensityFrame density;
  density.mu0 = p.mu[0];
  density.mu1 = p.mu[1];
  density.root00 = p.root(0, 0);
  density.root01 = 0.5 * (p.root(0, 1) + p.root(1, 0));
  density.root11 = p.root(1, 1);
  density.inverse00 = p.root_inverse(0, 0);
  density.inverse01 = 0.5 * (p.root_inverse(0, 1) + p.root_inverse(1, 0));
  density.inverse11 = p.root_inverse(1, 1);
  density.det_sigma = p.sigma.determinant();
  density.radius = p.rho_max;
  density.k = p.k;
  density.log_coefficient = std::log(p.coefficient);
  density.log_gamma = std::lgamma(p.k + 1);
  simd::pair_frames(density, basis.arrays(), scratch.frames(n));
  auto& order = scratch.order;
  order.clear();
  for (std::size_t j = 0; j < n; ++j) {  // a bound that is not a number (overflow) cuts nothing
    const double bound = scratch.log_bound[j];
    order.emplace_back(std::isnan(bound) ? std::numeric_limits<double>::infinity() : bound, j);
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  });
  scratch.row.assign(n, Integrals2D{});
  double log_cut = -std::numeric_limits<double>::infinity(), largest = 0;
  for (const auto& [log_bound, j] : order) {
    if (log_bound < log_cut) break;  // and so is every later bound
    const Basis2D& psi = basis.functions[j];
    Integrals2D& out = scratch.row[j];
    if (p.k == 1 || p.k == 2) {
      WhitenedPsi w;
      const double c = scratch.cos[j], s = scratch.sin[j];
      w.frame << -s, c, c, s;
      w.m = {scratch.m1[j], scratch.m2[j]};
      w.s_long = scratch.s_long[j];
      w.s_short = scratch.s_short[j];
      out = beta_gaussian_chords(p, psi, w);
    } else {
      out = beta_gaussian_rays(p, psi);
    }
    if (out.r > largest) {
      largest = out.r;
      log_cut = std::log(kNegligible * largest);
    }
  }
}

// Calls visit(b, j, integrals) for every pair, examples spread over the threads, each example's
// pairs in the order of j (so that sums over j do not depend on how they were computed).
template <class T, class Visit>
void for_each_pair(T alpha, std::span<const T> mu, std::span<const T> sigma,
                   const GaussianBasis2D<T>& basis, Threads threads, const Visit& visit) {
  const PreparedBasis prepared = prepare(basis);
  const std::vector<Basis2D>& functions = prepared.functions;
  const std::size_t batch = mu.size() / 2;
  parallel_rows(example_rows(batch, basis.size()), threads, [&](std::size_t begin, std::size_t end) {
    PairScratch scratch;
    for (std::size_t b = begin; b < end; ++b) {
      const Eigen::Matrix2d s = symmetric_positive_definite("expectation_2d", "sigma", sigma.data() + 4 * b);
      const Density2D<double> density(alpha, {mu[2 * b], mu[2 * b + 1]}, to_array<double>(s));
      const Density2DParts p = parts(alpha, density);
      if (alpha == 1) {
        for (std::size_t j = 0; j < functions.size(); ++j) visit(b, j, gaussian(p, functions[j]));
        continue;
      }
      sparse_pairs(p, prepared, scratch);
      for (std::size_t j = 0; j < functions.size(); ++j) visit(b, j, scratch.row[j]);
    }
  });
}

// The pairs' integrals of the last few forward calls at alpha > 1, kept so that a backward call
// on the same inputs (the forward and backward of one training step, whether through
// continuous_attention_2d or the expectation alone) reuses them instead of computing every pair
// again. A call is found by its inputs as bytes (the type, alpha, mu, sigma, the basis), so a hit
// gives exactly the integrals a new computation would: the results are bit-identical either way.
// At most kSavedCalls calls of at most kSavedPairs pairs each are kept (4 x 3.7 MB).
struct SavedCall {
  std::vector<unsigned char> key;
  std::vector<Integrals2D> pairs;  // batch x N
};

constexpr std::size_t kSavedCalls = 4, kSavedPairs = std::size_t{1} << 16;

std::mutex saved_mutex;
std::deque<std::shared_ptr<const SavedCall>> saved_calls;  // newest first

template <class T>
std::vector<unsigned char> call_key(T alpha, std::span<const T> mu, std::span<const T> sigma,
                                    const GaussianBasis2D<T>& basis) {
  const std::size_t sizes[2] = {mu.size(), basis.size()};
  const std::span<const T> parts[5] = {std::span<const T>(&alpha, 1), mu, sigma, basis.centers, basis.widths};
  std::size_t total = sizeof sizes;
  for (const auto& part : parts) total += part.size_bytes();
  std::vector<unsigned char> key(total);  // sizeof(T) is implied by the total
  std::memcpy(key.data(), sizes, sizeof sizes);
  std::size_t at = sizeof sizes;
  for (const auto& part : parts) {
    if (!part.empty()) std::memcpy(key.data() + at, part.data(), part.size_bytes());
    at += part.size_bytes();
  }
  return key;
}

void keep_call(std::shared_ptr<const SavedCall> call) {
  const std::lock_guard<std::mutex> lock(saved_mutex);
  saved_calls.push_front(std::move(call));
  if (saved_calls.size() > kSavedCalls) saved_calls.pop_back();
}

std::shared_ptr<const SavedCall> find_call(const std::vector<unsigned char>& key) {
  const std::lock_guard<std::mutex> lock(saved_mutex);
  for (const auto& call : saved_calls)
    if (call->key == key) return call;
  return nullptr;
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
  const bool keep = alpha != 1 && r.size() <= detail::kSavedPairs && !r.empty();
  auto call = keep ? std::make_shared<detail::SavedCall>() : nullptr;
  if (keep) call->pairs.resize(r.size());
  detail::for_each_pair(alpha, mu, sigma, basis, threads, [&](std::size_t b, std::size_t j, const auto& i) {
    r[b * n + j] = static_cast<T>(i.r);
    if (keep) call->pairs[b * n + j] = i;
  });
  if (keep) {
    call->key = detail::call_key(alpha, mu, sigma, basis);
    detail::keep_call(std::move(call));
  }
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
  auto visit = [&](std::size_t b, std::size_t j, const detail::Integrals2D& i) {
    if (!r.empty()) r[b * n + j] = static_cast<T>(i.r);
    const double weight = g[b * n + j];
    by_mu[b] += weight * i.dmu;
    by_sigma[b] += weight * i.dsigma;
  };
  // The integrals of a forward call on the same inputs, when one is kept (see SavedCall).
  const auto saved = alpha != 1 && batch > 0 ? detail::find_call(detail::call_key(alpha, mu, sigma, basis)) : nullptr;
  if (saved) {
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t j = 0; j < n; ++j) visit(b, j, saved->pairs[b * n + j]);
  } else {
    detail::for_each_pair(alpha, mu, sigma, basis, threads, visit);
  }
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
