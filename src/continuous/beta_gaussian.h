// Constants of the beta-Gaussian (continuous alpha-entmax of a quadratic score), shared by the
// 1D and 2D densities.
#pragma once

namespace sparcon::detail {

/// R of docs/math.md section 6: with D the dimension and a1 = alpha - 1,
///   R = [Gamma(D/2 + alpha/a1) / (Gamma(alpha/a1) pi^(D/2)) (2/a1)^(1/a1)]^(a1/(2 + a1 D)),
/// so that -tau = (R^2/2) det(Sigma)^(-1/(D + 2/a1)) (alpha > 1).
double beta_gaussian_radius(double alpha, int dimension);

/// Throws std::invalid_argument unless alpha >= 1, mu and the scale (> 0) are finite; the
/// message calls the scale `scale_name`.
void check_density_arguments(const char* function, double alpha, double mu, double scale,
                             const char* scale_name = "sigma2");

}  // namespace sparcon::detail
