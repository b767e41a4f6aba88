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
//                theta, u = a sin(theta), over the part of the support within 12 s of d (the
//                integrand is below e^-72 of its peak outside). Error relative to max_j r_bj,
//                measured against the core over scales 1e-4..0.3 and the paper's basis
//                (test_generic_backend.py::test_expectation_1d_error_of_the_fixed_rule): below
//                1e-11 for 1.05 <= alpha <= 3, 1e-9 at alpha = 1.01 (the profile cos^(2k+1) is
//                then narrow), 1e-7 at alpha = 5 (cos^1.5 is not smooth at the ends).
//   dr/dmu = C (d P_0 - P_1)/w,   dr/dsigma2 = C (d P_1 - P_2)/(w (alpha + 1) sigma2).
// 2D, alpha = 1 only: r = N(mu; c, Sigma + W), dr/dmu = r V^-1 d, dr/dSigma = r/2 (V^-1 d d^T V^-1 - V^-1),
// V = Sigma + W. (2D with alpha > 1 has no generic kernel yet: the core only.)
#pragma once

#include <ATen/ATen.h>

namespace sparcon::torch::generic {

/// Panels of the fixed quadrature rule of the 1D expectation (8 Gauss-Legendre points each).
inline constexpr int kPanels = 24;

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

/// -tau and the half-width a of the 1D densities of family alpha > 1 with scales sigma2
/// (Density1D): -tau = (R^2/2) sigma2^(-(alpha-1)/(alpha+1)), a = sqrt(-2 tau sigma2).
std::pair<at::Tensor, at::Tensor> beta_gaussian_1d(double alpha, const at::Tensor& sigma2);

}  // namespace sparcon::torch::generic
