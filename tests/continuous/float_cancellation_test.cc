// The float cancellation trap of docs/math.md section 13: for alpha = 2 and a tiny scale, the form
// theta . E[phi psi] - tau E[psi] of r_j cancels catastrophically in float (0.15% error at
// sigma2 = 1e-7, 1% at 1e-9). expectation_1d<float> must still match the long-double reference
// to 1e-5 relative for centres near mu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "continuous_cases.h"
#include "continuous_reference.h"
#include "sparcon/continuous.h"

namespace sparcon_test {
namespace {

/// The naive form, all in float: r = -(1/(2 sigma2)) int_S (t - mu)^2 psi - tau int_S psi with the
/// raw moments int_S t^k psi expanded (what docs/math.md warns against). Only used to show that the
/// cases below are the trap.
float naive_float(float mu, float sigma2, float c, float w) {
  const float a = std::cbrt(1.5f * sigma2), tau = -a * a / (2 * sigma2), s = std::sqrt(w);
  const float z1 = (mu - a - c) / s, z2 = (mu + a - c) / s;
  const float inv_sqrt2 = 0.70710678f, inv_sqrt_2pi = 0.39894228f;
  const float phi1 = inv_sqrt_2pi * std::exp(-0.5f * z1 * z1), phi2 = inv_sqrt_2pi * std::exp(-0.5f * z2 * z2);
  const float m0 = 0.5f * (std::erf(z2 * inv_sqrt2) - std::erf(z1 * inv_sqrt2));
  const float t1 = c * m0 + s * (phi1 - phi2);
  const float t2 = (c * c + s * s) * m0 + 2 * c * s * (phi1 - phi2) + w * (z1 * phi1 - z2 * phi2);
  const float theta1 = mu / sigma2, theta2 = -1 / (2 * sigma2);
  return theta1 * t1 + theta2 * t2 - (mu * mu / (2 * sigma2) + tau) * m0;
}

TEST(ContinuousFloatCancellation, SparsemaxTinyScaleMatchesTheReference) {
  for (const float sigma2 : {1e-7f, 1e-9f}) {
    LD worst_naive = 0;
    for (const float mu : {0.5f, 0.123f, 0.9f}) {
      const float a = std::cbrt(1.5f * sigma2);
      sparcon::GaussianBasis1D<float> basis;
      for (const float k : {-1.5f, -1.0f, -0.5f, 0.0f, 0.3f, 0.8f, 2.0f}) {
        for (const float w : {1e-4f, 0.01f, 0.25f}) {
          basis.centers.push_back(mu + k * a);
          basis.widths.push_back(w);
        }
      }
      std::vector<float> r(basis.size());
      const std::vector<float> mus{mu}, s2s{sigma2};
      sparcon::expectation_1d<float>(2.0f, mus, s2s, basis, r);
      const cref::Density p = cref::make_density(2, mu, sigma2);
      for (std::size_t j = 0; j < basis.size(); ++j) {
        const LD want = cref::expect(p, basis.centers[j], basis.widths[j]);
        EXPECT_LE(cref::rel_err(r[j], want), 1e-5L)
            << "sigma2=" << sigma2 << " mu=" << mu << " c=" << basis.centers[j] << " w=" << basis.widths[j]
            << " got " << r[j] << " want " << static_cast<double>(want);
        worst_naive = std::max(worst_naive, cref::rel_err(naive_float(mu, sigma2, basis.centers[j], basis.widths[j]), want));
      }
    }
    // the cases are the trap: the naive float form is off by far more than the tolerance
    EXPECT_GT(worst_naive, 1e-4L) << "sigma2=" << sigma2;
    RecordProperty(sigma2 > 1e-8f ? "naive_rel_err_1e-7" : "naive_rel_err_1e-9", std::to_string(static_cast<double>(worst_naive)));
  }
}

}  // namespace
}  // namespace sparcon_test
