// Covariance ellipses (kit/ellipse.h).
#include "kit/ellipse.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "kit/html.h"

namespace kit {
namespace {

std::string text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string matrix_text(const std::array<double, 4>& s) {
  return "[" + text(s[0]) + ", " + text(s[1]) + "; " + text(s[2]) + ", " + text(s[3]) + "]";
}

}  // namespace

Ellipse covariance_ellipse(const std::array<double, 2>& mean, const std::array<double, 4>& covariance, double radius,
                           const Frame& frame) {
  if (!std::isfinite(mean[0]) || !std::isfinite(mean[1]))
    throw std::invalid_argument("covariance_ellipse: mean = (" + text(mean[0]) + ", " + text(mean[1]) +
                                ") is not finite");
  const auto& s = covariance;
  if (!std::all_of(s.begin(), s.end(), [](double v) { return std::isfinite(v); }))
    throw std::invalid_argument("covariance_ellipse: covariance = " + matrix_text(s) + " is not finite");
  if (std::abs(s[1] - s[2]) > 1e-9 * std::max({std::abs(s[0]), std::abs(s[3]), std::abs(s[1]), 1e-300}))
    throw std::invalid_argument("covariance_ellipse: covariance = " + matrix_text(s) + " is not symmetric");
  const double det = s[0] * s[3] - s[1] * s[2];
  if (!(s[0] > 0) || !(det > 0))
    throw std::invalid_argument("covariance_ellipse: covariance = " + matrix_text(s) +
                                " is not positive definite (det = " + text(det) + ")");
  if (!std::isfinite(radius) || !(radius > 0))
    throw std::invalid_argument("covariance_ellipse: radius = " + text(radius) + " must be finite and > 0");
  if (!(frame.width > 0) || !(frame.height > 0) || !std::isfinite(frame.width) || !std::isfinite(frame.height))
    throw std::invalid_argument("covariance_ellipse: frame of " + text(frame.width) + " x " + text(frame.height) +
                                " must have a positive size");
  const double w = frame.width, h = frame.height;
  const double cxx = w * w * s[3], cyy = h * h * s[0], cxy = w * h * 0.5 * (s[1] + s[2]);
  const double mid = 0.5 * (cxx + cyy), half = std::hypot(0.5 * (cxx - cyy), cxy);
  const double l1 = mid + half, l2 = std::max(mid - half, 0.0);
  double angle = 0.5 * std::atan2(2 * cxy, cxx - cyy) * 180.0 / std::numbers::pi;  // in (-90, 90]
  if (angle <= -90.0) angle += 180.0;
  return {frame.x(mean[1]), frame.y(mean[0]), radius * std::sqrt(l1), radius * std::sqrt(l2), angle};
}

std::string ellipse_svg(const Ellipse& e, std::string_view css_class) {
  return "<ellipse class=\"" + html_escape(css_class) + "\" cx=\"" + svg_number(e.cx) + "\" cy=\"" +
         svg_number(e.cy) + "\" rx=\"" + svg_number(e.rx) + "\" ry=\"" + svg_number(e.ry) + "\" transform=\"rotate(" +
         svg_number(e.angle) + " " + svg_number(e.cx) + " " + svg_number(e.cy) + ")\"></ellipse>";
}

}  // namespace kit
