#include "density_integral.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace vqa {
namespace {

// 8-point Gauss-Legendre nodes and weights on [-1, 1].
constexpr double kNodes[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363};
constexpr double kWeights[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763};

/// int_a^b f by `panels` equal panels of 8-point Gauss-Legendre.
template <class F>
double gauss_legendre(F&& f, double a, double b, int panels) {
  if (!(b > a)) return 0.0;
  const double width = (b - a) / panels;
  double sum = 0;
  for (int p = 0; p < panels; ++p) {
    const double centre = a + (p + 0.5) * width, half = width / 2;
    for (int i = 0; i < 4; ++i)
      sum += kWeights[i] * (f(centre - half * kNodes[i]) + f(centre + half * kNodes[i])) * half;
  }
  return sum;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

struct Geometry {
  double mu0, mu1, s00, s01, s11, p11;
};

Geometry geometry(const Density& density) {
  const auto mu = density.mu();
  const auto s = density.sigma();
  const double det = s[0] * s[3] - s[1] * s[2];
  return {mu[0], mu[1], s[0], 0.5 * (s[1] + s[2]), s[3], s[0] / det};
}

double gaussian_mass(const Density& density, const Rect& r) {
  const Geometry g = geometry(density);
  const double sd0 = std::sqrt(g.s00);
  const double sd1 = std::sqrt(std::max(g.s11 - g.s01 * g.s01 / g.s00, 0.0));
  const double lo = std::max(r.t0_begin - g.mu0, -12 * sd0), hi = std::min(r.t0_end - g.mu0, 12 * sd0);
  if (!(hi > lo)) return 0.0;
  const double slope = g.s01 / g.s00;
  const auto inner = [&](double d0) {
    const double m = g.mu1 + slope * d0;
    const double band = normal_cdf((r.t1_end - m) / sd1) - normal_cdf((r.t1_begin - m) / sd1);
    return std::exp(-0.5 * d0 * d0 / g.s00) / (sd0 * std::sqrt(2 * M_PI)) * band;
  };
  const int panels = std::max(1, static_cast<int>(std::ceil((hi - lo) / (0.5 * sd0))));
  return gauss_legendre(inner, lo, hi, panels);
}

/// The outer integral over the ellipse's rows inside r of inner(d0, m, h) (m the chord's centre
/// offset, h its half-length), in phi with d0 = H sin(phi), cut at the kinks.
template <class Inner>
double ellipse_integral(const Density& density, const Rect& r, Inner&& inner) {
  const Geometry g = geometry(density);
  const double r2 = density.support_radius2();
  const double H = std::sqrt(r2 * g.s00);
  const double lo = std::max(r.t0_begin - g.mu0, -H), hi = std::min(r.t0_end - g.mu0, H);
  if (!(hi > lo) || !(r.t1_end > r.t1_begin)) return 0.0;
  const double slope = g.s01 / g.s00;
  std::vector<double> cuts = {std::asin(std::clamp(lo / H, -1.0, 1.0)), std::asin(std::clamp(hi / H, -1.0, 1.0))};
  // Where the chord's ends cross t1 = edge: q(d0, e) = r2 with e = edge - mu1, i.e.
  // p11 (e - slope d0)^2 + d0^2 / S00 = r2, a quadratic a d0^2 + b d0 + c = 0.
  for (const double edge : {r.t1_begin, r.t1_end}) {
    const double e = edge - g.mu1;
    const double a = g.p11 * slope * slope + 1 / g.s00, b = -2 * g.p11 * slope * e, c = g.p11 * e * e - r2;
    const double disc = b * b - 4 * a * c;
    if (disc <= 0) continue;
    for (const double sign : {-1.0, 1.0}) {
      const double d0 = (-b + sign * std::sqrt(disc)) / (2 * a);
      if (d0 > lo && d0 < hi) cuts.push_back(std::asin(std::clamp(d0 / H, -1.0, 1.0)));
    }
  }
  std::sort(cuts.begin(), cuts.end());
  const auto outer = [&](double phi) {
    const double d0 = H * std::sin(phi);
    const double c = std::max(r2 - d0 * d0 / g.s00, 0.0);
    const double h = std::sqrt(c / g.p11);
    return inner(c, h, r.t1_begin - g.mu1 - slope * d0, r.t1_end - g.mu1 - slope * d0) * H * std::cos(phi);
  };
  // Panels of at most 0.5 / sqrt(e + 1) radians: cos(phi)^(2e+2) narrows as alpha approaches 1.
  const double e = 1 / (density.alpha() - 1);
  double sum = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int panels = std::max(2, static_cast<int>(std::ceil((cuts[i + 1] - cuts[i]) * std::sqrt(e + 1) / 0.5)));
    sum += gauss_legendre(outer, cuts[i], cuts[i + 1], panels);
  }
  return sum;
}

}  // namespace

double density_mass(const Density& density, const Rect& rect) {
  if (density.alpha() == 1.0) return gaussian_mass(density, rect);
  const double e = 1 / (density.alpha() - 1);
  const double scale = std::pow((density.alpha() - 1) / 2, e);
  // c, h: the chord at this row; a, b: the rectangle's columns relative to the chord's centre.
  const auto inner = [&](double c, double h, double a, double b) {
    if (h <= 0) return 0.0;
    const double ta = std::asin(std::clamp(a / h, -1.0, 1.0)), tb = std::asin(std::clamp(b / h, -1.0, 1.0));
    const auto f = [&](double theta) { return std::pow(std::cos(theta), 2 * e + 1); };
    const int panels = std::max(2, static_cast<int>(std::ceil((tb - ta) * std::sqrt(e + 1) / 0.5)));
    return scale * std::pow(c, e) * h * gauss_legendre(f, ta, tb, panels);
  };
  return ellipse_integral(density, rect, inner);
}

double support_area(const Density& density, const Rect& rect) {
  if (density.alpha() == 1.0)
    throw std::invalid_argument("vqa::support_area: alpha = 1 (continuous softmax) has the whole plane as support");
  const auto inner = [](double, double h, double a, double b) {
    return std::max(0.0, std::min(b, h) - std::max(a, -h));
  };
  return ellipse_integral(density, rect, inner);
}

kit::Matrix cell_masses(const Density& density, std::size_t rows, std::size_t cols) {
  if (rows == 0 || cols == 0) throw std::invalid_argument("vqa::cell_masses: an empty grid");
  kit::Matrix out{rows, cols, std::vector<double>(rows * cols)};
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k) {
      const Rect cell{static_cast<double>(i) / rows, static_cast<double>(i + 1) / rows, static_cast<double>(k) / cols,
                      static_cast<double>(k + 1) / cols};
      out.values[i * cols + k] = density_mass(density, cell);
    }
  return out;
}

}  // namespace vqa
