// The kernel of pair_frames.h, written once with Google Highway; pair_frames.cc includes this
// header once per target (hwy/foreach_target.h) and exports it. A vector of basis functions at a
// time, for one density:
//
// Frame. A = Sigma^(1/2) P Sigma^(1/2) = mean I + h [[cos 2 phi, sin 2 phi], [sin 2 phi, -cos 2 phi]]
// with mean = (A00 + A11) / 2, h = |((A00 - A11) / 2, A01)|: its eigenvalues are mean + h (along
// (cos phi, sin phi), psi's short axis) and det A / (mean + h) = det Sigma det P / (mean + h) (no
// cancellation, however anisotropic), and phi comes from 2 phi by the half-angle formulas (no
// trigonometric function): cos phi = sqrt((1 + cos 2 phi) / 2), sin phi = sin 2 phi / (2 cos phi)
// where cos 2 phi >= 0, else sin phi = +-sqrt((1 - cos 2 phi) / 2) of sin 2 phi's sign and
// cos phi = sin 2 phi / (2 sin phi). s_long = (det A / (mean + h))^(-1/2), s_short = (mean + h)^(-1/2).
//
// Bound. In these coordinates r = E[p] with (x, y) drawn from psi and p = C (1 - |(x, y)|^2 /
// R^2)_+^k. For a unit vector n, the half-plane n.(x, y) <= R holds the disk, and on the disk,
// with delta = R - n.(x, y) >= 0, 1 - |(x, y)|^2 / R^2 <= (R - n.(x, y)) (R + n.(x, y)) / R^2 <=
// 2 delta / R, so p <= C min(1, 2 delta / R)^k. n.(x, y) is normal with mean n.m and standard
// deviation s_n = |diag(s_long, s_short) n|; with a = (n.m - R) / s_n > 0 and v = delta / s_n,
// normal of mean -a, whose density phi(v + a) <= phi(a) exp(-a v) for v >= 0:
//   r <= C phi(a) min(1 / a, Gamma(k + 1) (2 s_n / R)^k / a^(k + 1)).
// Any n gives a bound; the best is the direction of the point of the disk nearest to m for
// psi's metric, x_i = m_i g_i, g_i = 1 / (1 + lambda s_i^2), with lambda >= 0 the root of
// |x|^2 = R^2. Two steps of Newton's method from lambda = 0 (|x|^2 is convex and decreasing in
// lambda, so they rise towards the root) come close enough: on issue 15's benchmark (the paper's
// basis) the pairs this and the cut leave are 3936 of 6400 (n = m / |m| alone: 4022; the root:
// 3924) where 3902 have r above the cut. log C when m is inside the disk or a <= 0.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_CONTINUOUS_PAIR_FRAMES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_CONTINUOUS_PAIR_FRAMES_INL_H_
#undef SPARCON_CONTINUOUS_PAIR_FRAMES_INL_H_
#else
#define SPARCON_CONTINUOUS_PAIR_FRAMES_INL_H_
#endif

#include <cstddef>

#include "continuous/pair_frames.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The bound of the top of the file, lane by lane, from m and the squared widths c1 = s_long^2,
// c2 = s_short^2.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V LogBound(D d, const DensityFrame& density, V m1, V m2, V c1, V c2) {
  const V one = hn::Set(d, 1.0), zero = hn::Zero(d);
  const V radius = hn::Set(d, density.radius), radius2 = hn::Mul(radius, radius);
  const V log_c = hn::Set(d, density.log_coefficient);
  const auto outside = hn::Gt(hn::MulAdd(m1, m1, hn::Mul(m2, m2)), radius2);
  V lambda = zero, g1 = one, g2 = one, x1 = m1, x2 = m2;
  for (int step = 0; step < 2; ++step) {
    const V excess = hn::Sub(hn::MulAdd(x1, x1, hn::Mul(x2, x2)), radius2);
    const V slope = hn::Mul(hn::Set(d, -2.0), hn::MulAdd(hn::Mul(c1, hn::Mul(x1, x1)), g1,
                                                          hn::Mul(hn::Mul(c2, hn::Mul(x2, x2)), g2)));
    const auto moving = hn::Gt(excess, zero);  // once on the disk, no further step
    lambda = hn::IfThenElse(moving, hn::Sub(lambda, hn::Div(excess, slope)), lambda);
    g1 = hn::Div(one, hn::MulAdd(lambda, c1, one));
    g2 = hn::Div(one, hn::MulAdd(lambda, c2, one));
    x1 = hn::Mul(m1, g1);
    x2 = hn::Mul(m2, g2);
  }
  const V inverse = hn::Div(one, hn::Sqrt(hn::MulAdd(x1, x1, hn::Mul(x2, x2))));
  const V n1 = hn::Mul(x1, inverse), n2 = hn::Mul(x2, inverse);
  const V s_n = hn::Sqrt(hn::MulAdd(hn::Mul(n1, n1), c1, hn::Mul(hn::Mul(n2, n2), c2)));
  const V a = hn::Div(hn::Sub(hn::MulAdd(n1, m1, hn::Mul(n2, m2)), radius), s_n);
  const auto beyond = hn::And(outside, hn::Gt(a, zero));
  const V safe_a = hn::IfThenElse(beyond, a, one), log_a = hn::Log(d, safe_a);
  const V log_phi = hn::MulAdd(hn::Set(d, -0.5), hn::Mul(safe_a, safe_a), hn::Set(d, -0.9189385332046727));
  const V log_ratio = hn::Log(d, hn::Mul(hn::Set(d, 2 / density.radius), hn::IfThenElse(beyond, s_n, one)));
  const V profile = hn::MulAdd(hn::Set(d, density.k), hn::Sub(log_ratio, log_a), hn::Set(d, density.log_gamma));
  const V bound = hn::Add(hn::Sub(hn::Add(log_c, log_phi), log_a), hn::Min(zero, profile));
  return hn::IfThenElse(beyond, bound, log_c);
}

void PairFramesOf(const DensityFrame& density, const BasisArrays& basis, const PairFrames& out) {
  using D = hn::ScalableTag<double>;
  using V = hn::Vec<D>;
  static_assert(HWY_MAX_BYTES <= 64 * sizeof(double), "the arrays are padded to 64 entries");
  const D d;
  const V r00 = hn::Set(d, density.root00), r01 = hn::Set(d, density.root01), r11 = hn::Set(d, density.root11);
  const V i00 = hn::Set(d, density.inverse00), i01 = hn::Set(d, density.inverse01);
  const V i11 = hn::Set(d, density.inverse11);
  const V mu0 = hn::Set(d, density.mu0), mu1 = hn::Set(d, density.mu1), det_sigma = hn::Set(d, density.det_sigma);
  const V half = hn::Set(d, 0.5), one = hn::Set(d, 1.0), zero = hn::Zero(d);
  for (std::size_t j = 0; j < basis.n; j += hn::Lanes(d)) {
    const V p00 = hn::LoadU(d, basis.p00 + j), p01 = hn::LoadU(d, basis.p01 + j);
    const V p11 = hn::LoadU(d, basis.p11 + j);
    // A = Sigma^(1/2) P Sigma^(1/2), through T = P Sigma^(1/2)
    const V t00 = hn::MulAdd(p00, r00, hn::Mul(p01, r01)), t01 = hn::MulAdd(p00, r01, hn::Mul(p01, r11));
    const V t10 = hn::MulAdd(p01, r00, hn::Mul(p11, r01)), t11 = hn::MulAdd(p01, r01, hn::Mul(p11, r11));
    const V a00 = hn::MulAdd(r00, t00, hn::Mul(r01, t10)), a01 = hn::MulAdd(r00, t01, hn::Mul(r01, t11));
    const V a11 = hn::MulAdd(r01, t01, hn::Mul(r11, t11));
    const V half_difference = hn::Mul(half, hn::Sub(a00, a11));
    const V h = hn::Sqrt(hn::MulAdd(half_difference, half_difference, hn::Mul(a01, a01)));
    const V large = hn::MulAdd(half, hn::Add(a00, a11), h);
    const V det_a = hn::Mul(det_sigma, hn::LoadU(d, basis.det_p + j));
    const V s_short = hn::Sqrt(hn::Div(one, large)), s_long = hn::Sqrt(hn::Div(large, det_a));
    // cos 2 phi and sin 2 phi (1 and 0 when A is a multiple of I), then the half angle
    const auto round = hn::Eq(h, zero);
    const V inverse_h = hn::Div(one, hn::IfThenElse(round, one, h));
    const V cos2 = hn::IfThenElse(round, one, hn::Mul(half_difference, inverse_h));
    const V sin2 = hn::IfThenElseZero(hn::Not(round), hn::Mul(a01, inverse_h));
    const auto cos_first = hn::Ge(cos2, zero);
    const V root = hn::Sqrt(hn::Mul(half, hn::IfThenElse(cos_first, hn::Add(one, cos2), hn::Sub(one, cos2))));
    const V signed_root = hn::IfThenElse(cos_first, root, hn::CopySign(root, sin2));
    const V other = hn::Div(hn::Mul(half, sin2), signed_root);
    const V c = hn::IfThenElse(cos_first, signed_root, other), s = hn::IfThenElse(cos_first, other, signed_root);
    // m = frame^T Sigma^(-1/2) (c - mu)
    const V e0 = hn::Sub(hn::LoadU(d, basis.c0 + j), mu0), e1 = hn::Sub(hn::LoadU(d, basis.c1 + j), mu1);
    const V u0 = hn::MulAdd(i00, e0, hn::Mul(i01, e1)), u1 = hn::MulAdd(i01, e0, hn::Mul(i11, e1));
    const V m1 = hn::MulSub(c, u1, hn::Mul(s, u0)), m2 = hn::MulAdd(c, u0, hn::Mul(s, u1));
    hn::StoreU(c, d, out.cos + j);
    hn::StoreU(s, d, out.sin + j);
    hn::StoreU(m1, d, out.m1 + j);
    hn::StoreU(m2, d, out.m2 + j);
    hn::StoreU(s_long, d, out.s_long + j);
    hn::StoreU(s_short, d, out.s_short + j);
    hn::StoreU(LogBound(d, density, m1, m2, hn::Mul(s_long, s_long), hn::Mul(s_short, s_short)), d,
               out.log_bound + j);
  }
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
