// The device-generic kernels of the continuous expectations r = E_p[psi_j] (backend.h; the core's
// sparcon/continuous.h, docs/math.md sections 6-7): ATen tensor operations only, computed in
// double (the core's precision; on Apple's MPS, which has no double, in float).
//
// 1D, for densities p_b (location mu_b, scale sigma2_b, family alpha >= 1) and basis functions
// psi_j = N(t; c_j, w_j), with d = c - mu:
//   alpha = 1:  r = N(mu; c, sigma2 + w)                                   (closed form)
//   alpha > 1:  r = C P_0,  P_m = int_{-a}^{a} (1 - u^2/a^2)^k u^m N(u; d, w) du,
//               k = 1/(alpha-1), a the half-width, C = ((alpha-1)(-tau))^k
//     alpha = 2: P_m in closed form from the truncated Gaussian moments where they do not cancel
//                (|d| <= a + 8 s and 2a >= s, s = sqrt(w)), as the core's; by the rule below elsewhere;
//     other alpha: a fixed composite Gauss-Legendre rule (kPanels panels of 8 points) in
//                theta, u = a sin(theta), over the part of the support where the Gaussian exceeds
//                e^-72 of its largest value on the support (within 12 s of d when d is inside;
//                the core's window). Error relative to max_j r_bj,
//                measured against the core over scales 1e-4..0.3 and the paper's basis
//                (test_generic_backend.py::test_expectation_1d_error_of_the_fixed_rule): below
//                1e-11 for 1.05 <= alpha <= 3, 1e-9 at alpha = 1.01 (the profile cos^(2k+1) is
//                then narrow), 1e-7 at alpha = 5 (cos^1.5 is not smooth at the ends).
//   dr/dmu = C (d P_0 - P_1)/w,   dr/dsigma2 = C (d P_1 - P_2)/(w (alpha + 1) sigma2).
// 2D, alpha = 1: r = N(mu; c, Sigma + W), dr/dmu = r V^-1 d, dr/dSigma = r/2 (V^-1 d d^T V^-1 - V^-1),
// V = Sigma + W.
// 2D, alpha > 1 (the core's expectation_2d.cc, docs/math.md section 11, "The angular rule in 2D"):
// whitened polar coordinates t = mu + Sigma^(1/2) rho (cos v, sin v), rho in [0, rho_max],
// rho_max = sqrt(-2 tau); along each ray psi is a Gaussian in rho, so the radial integrals are the
// profile moments P_1..P_3 on [0, rho_max] (as the core's: alpha = 2 in closed form, the rule
// below where that cancels, rays on which psi stays below e^-44 of its largest value on the disk
// skipped; other alpha: the fixed rule of kPanels2D x 8 Gauss-Legendre points in theta,
// rho = rho_max sin(theta)), and the angle takes the periodic trapezoid rule v_i = 2 pi i / n.
//   The number of rays n is one for the whole call: the largest of the core's per-pair numbers,
//   8 rho_eff / s rounded up to a multiple of 8 (rho_eff, s: docs/math.md section 11), clamped
//   to [32, 8192], found with one synchronisation (a tensor max and .item()). Every pair gets at
//   least the nodes the core gives it, so the angular error stays below the core's bound,
//   about exp(-32) ~ 1e-14 of r (the trapezoid error falls geometrically with n).
//   Error of r relative to max_j r_bj, measured against the core (whose rules the core's tests
//   hold to 1e-10 against adaptive quadrature) on random densities with the paper's 10 x 10 basis
//   (test_generic_backend.py::test_expectation_2d_error_of_the_fixed_rule): alpha = 2 below
//   1e-13; 1.1 <= alpha <= 3 with 2/(alpha-1) an integer (1.25, 1.5, 3: cos^(2k+1) smooth)
//   below 1e-12; other alpha as in 1D, the profile not smooth at the edge: 2e-10 at 2.5, 3e-8 at 5
//   (for a density far from every basis function, whose r comes from the edge: 1e-14 at alpha = 1.25,
//   1.5, 2, 3; 2e-8 at 2.5, 8e-7 at 5).
//   The gradients: dr/dmu = P (d E0 - E1), dr/dSigma = 1/2 [sym(M Sigma^-1) - gamma tr(M) Sigma^-1],
//   M = P (d E1^T - E2), with E0, E1, E2 = E_p[psi (1, u, u u^T)] from the same rules.
//   Memory: the loop runs over chunks of densities and rays of at most 2^18 (alpha = 2) or
//   2^22 / (8 kPanels2D) (other alpha) (density, basis function, ray) elements.
#pragma once

#include <ATen/ATen.h>

namespace sparcon::torch::generic {

/// Panels of the fixed quadrature rule of the 1D expectation (8 Gauss-Legendre points each).
inline constexpr int kPanels = 24;
/// Panels of the fixed radial rule of the 2D expectation, alpha > 1 other than 2 (8 points each).
inline constexpr int kPanels2D = 16;
/// The bounds of the number of rays of the 2D angular rule (the core's).
inline constexpr std::int64_t kMinRays = 32, kMaxRays = 8192;
/// Rays on which psi stays below e^-kNegligible of its largest value on the disk are skipped (alpha = 2).
inline constexpr double kNegligible = 44;

/// r and its partial derivatives, each (B, N) (2D: dr_dmu (B, N, 2), dr_dsigma (B, N, 2, 2)).
struct ExpectationParts {
  at::Tensor r, dr_dmu, dr_dsigma;
};

/// 1D: mu, sigma2 (B), centers, widths (N), already checked; results in double (B, N).
ExpectationParts expectation_1d(double alpha, const at::Tensor& mu, const at::Tensor& sigma2,
                                const at::Tensor& centers, const at::Tensor& widths);

/// 2D, alpha = 1: mu (B, 2), sigma (B, 2, 2) symmetric, centers (N, 2), widths (N, 2, 2).
ExpectationParts expectation_2d_gaussian(const at::Tensor& mu, const at::Tensor& sigma, const at::Tensor& centers,
                                         const at::Tensor& widths);

/// 2D, any alpha >= 1: the same arguments as expectation_2d_gaussian; alpha = 1 is that one. Meta
/// tensors (and empty batches or bases) give zeros of the shapes, on mu's device.
ExpectationParts expectation_2d(double alpha, const at::Tensor& mu, const at::Tensor& sigma, const at::Tensor& centers,
                                const at::Tensor& widths);

/// The number of rays of the 2D angular rule for these densities and basis functions (alpha > 1).
std::int64_t angular_nodes_2d(double alpha, const at::Tensor& mu, const at::Tensor& sigma, const at::Tensor& centers,
                              const at::Tensor& widths);

/// -tau and the half-width a of the 1D densities of family alpha > 1 with scales sigma2
/// (Density1D): -tau = (R^2/2) sigma2^(-(alpha-1)/(alpha+1)), a = sqrt(-2 tau sigma2).
std::pair<at::Tensor, at::Tensor> beta_gaussian_1d(double alpha, const at::Tensor& sigma2);

}  // namespace sparcon::torch::generic
