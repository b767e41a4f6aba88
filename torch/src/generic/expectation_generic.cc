// Device-generic continuous expectations (generic/expectation_generic.h).
#include "generic/expectation_generic.h"

#include "continuous/gauss_legendre.h"  // the core's rule (src/continuous)

#include <algorithm>
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

constexpr std::int64_t binomial(int n, int k) { return k == 0 ? 1 : binomial(n - 1, k - 1) * n / k; }

at::Tensor normal_pdf(const at::Tensor& z) { return at::exp(-0.5 * z * z) / std::sqrt(2 * kPi); }

// Phi(z2) - Phi(z1), z1 <= z2, from the tails (the core's normal_mass).
at::Tensor normal_mass(const at::Tensor& z1, const at::Tensor& z2) {
  const double r = 1 / std::numbers::sqrt2;
  const at::Tensor upper1 = at::erfc(z1 * r), upper2 = at::erfc(z2 * r), lower1 = at::erfc(-z1 * r),
                   lower2 = at::erfc(-z2 * r);
  return at::where(z1 >= 0, 0.5 * (upper1 - upper2),
                   at::where(z2 <= 0, 0.5 * (lower2 - lower1), 1 - 0.5 * lower1 - 0.5 * upper2));
}

// P_0..P_{count-1} of the profile (1 - u^2/R^2) (k = 1) on [lo, hi] in closed form: with
// U_m = int_lo^hi u^m N(u; d, s^2) = sum_i binom(m, i) d^(m-i) s^i J_i and the truncated moments
// J_m = (m-1) J_{m-2} - [z^(m-1) phi(z)], P_m = U_m - U_{m+2}/R^2 (the core's polynomial_profile).
std::vector<at::Tensor> parabola_moments(const at::Tensor& R, const at::Tensor& lo, const at::Tensor& hi,
                                         const at::Tensor& d, const at::Tensor& s, int count) {
  const int degree = count + 1;  // the highest U_m needed
  const at::Tensor z1 = (lo - d) / s, z2 = (hi - d) / s, f1 = normal_pdf(z1), f2 = normal_pdf(z2);
  std::vector<at::Tensor> J(degree + 1);
  J[0] = normal_mass(z1, z2);
  J[1] = f1 - f2;
  at::Tensor z1p = at::ones_like(z1), z2p = at::ones_like(z2);
  for (int m = 2; m <= degree; ++m) {
    z1p = z1p * z1;
    z2p = z2p * z2;
    J[m] = (m - 1) * J[m - 2] - (z2p * f2 - z1p * f1);
  }
  // The powers d^m and s^i J_i by products.
  std::vector<at::Tensor> d_power(degree + 1), sj(degree + 1);
  at::Tensor s_power = s;
  d_power[0] = at::ones_like(d);
  sj[0] = J[0];
  for (int m = 1; m <= degree; ++m) {
    d_power[m] = d_power[m - 1] * d;
    sj[m] = s_power * J[m];
    if (m < degree) s_power = s_power * s;
  }
  std::vector<at::Tensor> U(degree + 1);
  for (int m = 0; m <= degree; ++m) {
    U[m] = sj[m];
    for (int i = 0; i < m; ++i) U[m] = U[m] + static_cast<double>(binomial(m, i)) * d_power[m - i] * sj[i];
  }
  const at::Tensor q = 1 / (R * R);
  std::vector<at::Tensor> P(count);
  for (int m = 0; m < count; ++m) P[m] = U[m] - q * U[m + 2];
  return P;
}

// P_0..P_{count-1} by the fixed rule: panels x 8 Gauss-Legendre points in theta, u = R sin(theta),
// over [asin(lo'/R), asin(hi'/R)], [lo', hi'] the part of [lo, hi] where the Gaussian exceeds
// e^-72 of its largest value on [lo, hi] (the core's window: within 12 s of d when d is inside,
// within 144 s^2 / (sqrt(delta^2 + 144 s^2) + delta) of the nearest end when d is delta outside,
// so that a support far from the basis function keeps its relative accuracy).
// -R <= lo <= hi <= R; the inputs of any shape (...), the rule along a new last dimension.
std::vector<at::Tensor> quadrature_moments(double k, const at::Tensor& R, const at::Tensor& lo, const at::Tensor& hi,
                                           const at::Tensor& d, const at::Tensor& s, int panels, int count) {
  const auto& rule = sparcon::detail::GaussLegendre<8>::get();
  std::vector<double> x, w;
  for (int panel = 0; panel < panels; ++panel)
    for (int i = 0; i < 8; ++i) {
      x.push_back((panel + 0.5 * (rule.x[i] + 1)) / panels);  // in [0, 1]
      w.push_back(0.5 * rule.w[i] / panels);
    }
  const auto options = d.options();
  const at::Tensor nodes = at::tensor(x, options.device(at::kCPU)).to(d.device());
  const at::Tensor weights = at::tensor(w, options.device(at::kCPU)).to(d.device());
  const at::Tensor nearest = at::minimum(at::maximum(d, lo), hi), delta = at::abs(d - nearest);
  const at::Tensor reach = 144 * s * s / (at::sqrt(delta * delta + 144 * s * s) + delta);
  const at::Tensor clipped_lo = at::maximum(lo, nearest - reach), clipped_hi = at::minimum(hi, nearest + reach);
  const at::Tensor empty = clipped_lo >= clipped_hi;
  const at::Tensor t_lo = at::asin((clipped_lo / R).clamp(-1, 1)).unsqueeze(-1);
  const at::Tensor t_hi = at::asin((clipped_hi / R).clamp(-1, 1)).unsqueeze(-1);
  const at::Tensor theta = t_lo + (t_hi - t_lo) * nodes;  // (..., M)
  const at::Tensor u = R.unsqueeze(-1) * at::sin(theta);
  const at::Tensor c = at::cos(theta).clamp_min(0);
  const at::Tensor z = (u - d.unsqueeze(-1)) / s.unsqueeze(-1);
  // du = R cos(theta) dtheta; the profile (1 - u^2/R^2)^k = cos(theta)^(2k).
  const at::Tensor f = weights * (t_hi - t_lo) * R.unsqueeze(-1) * at::pow(c, 2 * k + 1) * normal_pdf(z) / s.unsqueeze(-1);
  std::vector<at::Tensor> out(count);
  at::Tensor power = at::ones_like(u);
  for (int m = 0; m < count; ++m) {
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
  const at::Tensor lo = -a;
  std::vector<at::Tensor> P;
  if (alpha == 2) {
    // The closed form, and the rule only for the pairs where the closed form cancels (d more
    // than 8 s outside the support, or a support narrow for the basis function).
    P = parabola_moments(a, lo, a, d, s, 3);
    const at::Tensor rule = ~((at::abs(d) <= a + 8 * s) & (2 * a >= s));
    if (!d.is_meta() && rule.any().item<bool>()) {
      const at::Tensor index = rule.flatten().nonzero().flatten();
      auto pick = [&](const at::Tensor& t) { return t.flatten().index_select(0, index); };
      const std::vector<at::Tensor> Q = quadrature_moments(k, pick(a), pick(lo), pick(a), pick(d), pick(s), kPanels, 3);
      for (int m = 0; m < 3; ++m) P[m] = P[m].flatten().index_copy(0, index, Q[m]).view_as(d);
    }
  } else {
    P = quadrature_moments(k, a, lo, a, d, s, kPanels, 3);
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

// ---- 2D, alpha > 1 ------------------------------------------------------------------------------

namespace {

// The entries [[xx, xy], [xy, yy]] of symmetric 2 x 2 matrices (..., 2, 2) (xy the mean of the two
// off-diagonal entries), and the closed forms of matrix2.h on them.
struct Symmetric2 {
  at::Tensor xx, xy, yy;

  explicit Symmetric2(const at::Tensor& m)
      : xx(m.select(-1, 0).select(-1, 0)),
        xy(0.5 * (m.select(-1, 1).select(-1, 0) + m.select(-1, 0).select(-1, 1))),
        yy(m.select(-1, 1).select(-1, 1)) {}
  Symmetric2(at::Tensor a, at::Tensor b, at::Tensor c) : xx(std::move(a)), xy(std::move(b)), yy(std::move(c)) {}

  at::Tensor det() const { return xx * yy - xy * xy; }
  at::Tensor matrix() const { return at::stack({at::stack({xx, xy}, -1), at::stack({xy, yy}, -1)}, -2); }
  Symmetric2 inverse() const {
    const at::Tensor q = 1 / det();
    return {yy * q, -xy * q, xx * q};
  }
  // The symmetric square root (M + sqrt(det M) I) / sqrt(tr M + 2 sqrt(det M)).
  Symmetric2 sqrt() const {
    const at::Tensor root_det = at::sqrt(det()), q = 1 / at::sqrt(xx + yy + 2 * root_det);
    return {(xx + root_det) * q, xy * q, (yy + root_det) * q};
  }
  // The smaller eigenvalue, as the product of the two over the larger.
  at::Tensor smallest_eigenvalue() const {
    const at::Tensor half_gap = 0.5 * (xx - yy);
    return det() / (0.5 * (xx + yy) + at::sqrt(half_gap * half_gap + xy * xy));
  }
};

// Ray-pair elements (density, basis function, ray) per chunk of the 2D loop: the closed form
// builds about 40 temporaries of this size, the rule 8 kPanels2D times more (kRulePoints).
constexpr std::int64_t kClosedChunk = std::int64_t{1} << 18;
constexpr std::int64_t kRulePoints = std::int64_t{1} << 22;
constexpr std::int64_t kRuleChunk = kRulePoints / (8 * kPanels2D);

// The radial moments P_m (m = 0..3) of the rule on flat tensors, in pieces of kRuleChunk.
std::vector<at::Tensor> rule_in_pieces(double k, const at::Tensor& R, const at::Tensor& lo, const at::Tensor& d,
                                       const at::Tensor& s) {
  std::vector<std::vector<at::Tensor>> pieces(4);
  for (std::int64_t start = 0; start < R.numel(); start += kRuleChunk) {
    const std::int64_t length = std::min(kRuleChunk, R.numel() - start);
    auto part = [&](const at::Tensor& t) { return t.narrow(0, start, length); };
    const std::vector<at::Tensor> P = quadrature_moments(k, part(R), part(lo), part(R), part(d), part(s), kPanels2D, 4);
    for (int m = 0; m < 4; ++m) pieces[m].push_back(P[m]);
  }
  std::vector<at::Tensor> out(4);
  for (int m = 0; m < 4; ++m) out[m] = at::cat(pieces[m]);
  return out;
}

}  // namespace

std::int64_t angular_nodes_2d(double alpha, const at::Tensor& mu_in, const at::Tensor& sigma_in,
                              const at::Tensor& centers_in, const at::Tensor& widths_in) {
  const at::ScalarType wide = wide_type(mu_in);
  const at::Tensor mu = mu_in.to(wide), c = centers_in.to(mu.device(), wide);
  const Symmetric2 sigma(sigma_in.to(wide)), width(widths_in.to(mu.device(), wide));
  const double gamma = (alpha - 1) / (2 * alpha);
  const at::Tensor rho = (radius(alpha, 2) * at::pow(sigma.det(), -gamma / 2)).unsqueeze(1);  // (B, 1)
  const Symmetric2 root_inverse = sigma.sqrt().inverse(), sigma_inverse = sigma.inverse();
  const at::Tensor ri = root_inverse.matrix().unsqueeze(1);                                   // (B, 1, 2, 2)
  const at::Tensor s = at::sqrt(Symmetric2(at::matmul(at::matmul(ri, width.matrix().unsqueeze(0)), ri)).smallest_eigenvalue());
  const at::Tensor d = c.unsqueeze(0) - mu.unsqueeze(1);                                       // (B, N, 2)
  const at::Tensor dx = d.select(-1, 0), dy = d.select(-1, 1);
  const at::Tensor distance = at::sqrt(sigma_inverse.xx.unsqueeze(1) * dx * dx + 2 * sigma_inverse.xy.unsqueeze(1) * dx * dy +
                                       sigma_inverse.yy.unsqueeze(1) * dy * dy);
  const at::Tensor rho_eff = at::sqrt(rho * rho + rho * at::minimum(distance, rho + 40 * s));
  const double need = (8 * rho_eff / s).max().item<double>();  // the one synchronisation
  if (!(need <= kMaxRays)) return kMaxRays;                     // (NaN too)
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(need / 8)) * 8, kMinRays, kMaxRays);
}

ExpectationParts expectation_2d(double alpha, const at::Tensor& mu_in, const at::Tensor& sigma_in,
                                const at::Tensor& centers_in, const at::Tensor& widths_in) {
  if (alpha == 1) return expectation_2d_gaussian(mu_in, sigma_in, centers_in, widths_in);
  const at::ScalarType wide = wide_type(mu_in);
  const std::int64_t B = mu_in.size(0), N = centers_in.size(0);
  const auto options = mu_in.options().dtype(wide);
  if (mu_in.is_meta() || sigma_in.is_meta() || centers_in.is_meta() || widths_in.is_meta() || B == 0 || N == 0)
    return {at::zeros({B, N}, options), at::zeros({B, N, 2}, options), at::zeros({B, N, 2, 2}, options)};
  const std::int64_t n = angular_nodes_2d(alpha, mu_in, sigma_in, centers_in, widths_in);

  const double k = 1 / (alpha - 1), gamma = (alpha - 1) / (2 * alpha), step = 2 * kPi / n;
  const at::Tensor mu = mu_in.to(wide), c = centers_in.to(mu.device(), wide);
  const Symmetric2 sigma(sigma_in.to(wide)), width(widths_in.to(mu.device(), wide));
  // The densities (B): rho_max = sqrt(-2 tau) = R det^(-gamma/2), C = ((alpha-1)(-tau))^k.
  const at::Tensor det = sigma.det();
  const at::Tensor rho = radius(alpha, 2) * at::pow(det, -gamma / 2);
  const at::Tensor coefficient = at::pow(0.5 * (alpha - 1) * rho * rho, k);
  const at::Tensor scale = step * at::sqrt(det) * coefficient * std::sqrt(2 * kPi);
  const at::Tensor root = sigma.sqrt().matrix(), sigma_inverse = sigma.inverse().matrix();
  // The basis functions (N): precision P = S^-1 and norm 1/(2 pi sqrt(det S)).
  const Symmetric2 width_inverse = width.inverse();
  const at::Tensor P = width_inverse.matrix();
  const Symmetric2 precision(width_inverse.xx.view({1, N, 1}), width_inverse.xy.view({1, N, 1}),
                             width_inverse.yy.view({1, N, 1}));
  const at::Tensor norm = (1 / (2 * kPi * at::sqrt(width.det()))).view({1, N, 1});
  // The pairs (B, N): d = c - mu, kappa = d^T P d.
  const at::Tensor d = c.unsqueeze(0) - mu.unsqueeze(1);
  const at::Tensor Pd = at::matmul(P.unsqueeze(0), d.unsqueeze(-1)).squeeze(-1);
  const at::Tensor kappa = (d * Pd).sum(-1);
  // The rays: unit vectors (cos v_i, sin v_i), v_i = 2 pi i / n.
  const at::Tensor v = at::arange(n, options) * step;
  const at::Tensor unit = at::stack({at::cos(v), at::sin(v)}, -1);  // (n, 2)

  // Chunks: Bc densities x all N basis functions x C rays, at most `budget` ray-pair elements.
  const std::int64_t budget = alpha == 2 ? kClosedChunk : kRuleChunk;
  const std::int64_t C = N * n <= budget ? n : std::max<std::int64_t>(1, budget / N);
  const std::int64_t Bc = C == n ? std::max<std::int64_t>(1, budget / (N * n)) : 1;

  std::vector<at::Tensor> E0s, E1s, E2s;
  for (std::int64_t b0 = 0; b0 < B; b0 += Bc) {
    const std::int64_t nb = std::min(Bc, B - b0);
    const at::Tensor root_b = root.narrow(0, b0, nb), kappa_b = kappa.narrow(0, b0, nb).unsqueeze(-1);
    const at::Tensor rho_b = rho.narrow(0, b0, nb).view({nb, 1, 1}), scale_b = scale.narrow(0, b0, nb).view({nb, 1, 1});
    const at::Tensor Pd_b = Pd.narrow(0, b0, nb), Pd0_b = Pd_b.select(-1, 0).unsqueeze(-1), Pd1_b = Pd_b.select(-1, 1).unsqueeze(-1);
    // psi along ray e = Sigma^(1/2) (cos v, sin v): exp(-(a rho^2 - 2 b rho + kappa)/2).
    struct Rays {
      at::Tensor e, a, b;
    };
    auto rays = [&](std::int64_t i0, std::int64_t count) {
      const at::Tensor e = at::matmul(root_b.unsqueeze(1), unit.narrow(0, i0, count).view({1, count, 2, 1})).squeeze(-1);
      const at::Tensor e0 = e.select(-1, 0).unsqueeze(1), e1 = e.select(-1, 1).unsqueeze(1);  // (nb, 1, C)
      // a = e^T P e, b = (P d)^T e, (nb, N, C).
      return Rays{e, precision.xx * e0 * e0 + 2 * precision.xy * e0 * e1 + precision.yy * e1 * e1,
                  Pd0_b * e0 + Pd1_b * e1};
    };
    // alpha = 2: the largest value of log psi on the disk over the rays, for the rays to skip.
    at::Tensor best;
    auto log_max = [&](const Rays& r) {
      const at::Tensor peak = at::minimum(at::clamp_min(r.b / r.a, 0), rho_b);
      return -0.5 * (r.a * peak * peak - 2 * r.b * peak + kappa_b);
    };
    if (alpha == 2)
      for (std::int64_t i0 = 0; i0 < n; i0 += C) {
        const at::Tensor m = std::get<0>(log_max(rays(i0, std::min(C, n - i0))).max(-1));
        best = best.defined() ? at::maximum(best, m) : m;
      }
    at::Tensor E0 = at::zeros({nb, N}, options), E1 = at::zeros({nb, N, 2}, options), E2 = at::zeros({nb, N, 2, 2}, options);
    for (std::int64_t i0 = 0; i0 < n; i0 += C) {
      const Rays r = rays(i0, std::min(C, n - i0));
      const at::Tensor s = at::rsqrt(r.a), centre = r.b / r.a, R = rho_b.expand_as(r.a), lo = at::zeros_like(R);
      const at::Tensor log_f = -0.5 * at::clamp_min(kappa_b - r.b * centre, 0);
      std::vector<at::Tensor> M;
      if (alpha == 2) {
        // The closed form; the rule where it cancels (the centre more than 8 s outside [0, rho_max],
        // or a radius narrow for the Gaussian); nothing on the rays where psi stays below e^-44
        // of its largest value on the disk (as the core).
        const at::Tensor keep = log_max(r) >= best.unsqueeze(-1) - kNegligible;
        M = parabola_moments(R, lo, R, centre, s, 4);
        const at::Tensor rule = keep & ~((centre >= -8 * s) & (centre <= R + 8 * s) & (R >= s));
        if (rule.any().item<bool>()) {
          const at::Tensor index = rule.flatten().nonzero().flatten();
          auto pick = [&](const at::Tensor& t) { return t.flatten().index_select(0, index); };
          const std::vector<at::Tensor> Q = rule_in_pieces(k, pick(R), pick(lo), pick(centre), pick(s));
          for (int m = 0; m < 4; ++m) M[m] = M[m].flatten().index_copy(0, index, Q[m]).view_as(centre);
        }
        for (at::Tensor& m : M) m = at::where(keep, m, 0.0);
      } else {
        M = quadrature_moments(k, R, lo, R, centre, s, kPanels2D, 4);
      }
      const at::Tensor w = scale_b * norm * s * at::exp(log_f);  // (nb, N, C)
      E0 = E0 + (w * M[1]).sum(-1);
      E1 = E1 + at::matmul(w * M[2], r.e);
      const at::Tensor ee = r.e.unsqueeze(-1) * r.e.unsqueeze(-2);  // (nb, C, 2, 2)
      E2 = E2 + at::matmul(w * M[3], ee.flatten(2)).view({nb, N, 2, 2});
    }
    E0s.push_back(E0);
    E1s.push_back(E1);
    E2s.push_back(E2);
  }
  const at::Tensor E0 = at::cat(E0s), E1 = at::cat(E1s), E2 = at::cat(E2s);
  // dr/dmu = P (d E0 - E1); dr/dSigma = 1/2 [sym(M Sigma^-1) - gamma tr(M) Sigma^-1], M = P (d E1^T - E2).
  const at::Tensor Pn = P.unsqueeze(0);
  const at::Tensor dmu = at::matmul(Pn, (d * E0.unsqueeze(-1) - E1).unsqueeze(-1)).squeeze(-1);
  const at::Tensor big_m = at::matmul(Pn, d.unsqueeze(-1) * E1.unsqueeze(-2) - E2);
  const at::Tensor si = sigma_inverse.unsqueeze(1);
  const at::Tensor product = at::matmul(big_m, si);
  const at::Tensor trace = big_m.diagonal(0, -2, -1).sum(-1).unsqueeze(-1).unsqueeze(-1);
  const at::Tensor dsigma = 0.5 * (0.5 * (product + product.transpose(-1, -2)) - gamma * trace * si);
  return {E0, dmu, dsigma};
}

}  // namespace sparcon::torch::generic
