// The ellipse of a 2D Gaussian (or of the elliptical support of a 2D continuous sparsemax)
// given its mean and covariance, placed on an image by a Frame and drawn as an SVG <ellipse>.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "kit/svg.h"

namespace kit {

/// An SVG ellipse: centre (cx, cy), semi-axes rx >= ry > 0, the rx axis rotated by angle
/// degrees from the x axis towards the y axis (SVG's rotate(), y pointing down), in (-90, 90].
struct Ellipse {
  double cx = 0, cy = 0, rx = 0, ry = 0, angle = 0;
};

/// The curve {t : (t - mean)^T Sigma^-1 (t - mean) = radius^2} for positions t = (t0, t1)
/// (kit/svg.h: t0 down the rows, t1 across), Sigma = covariance (row-major [s00, s01, s10,
/// s11]), placed on frame. In SVG coordinates p = (x, y) = (left + W t1, top + H t0) the
/// covariance is C = [[W^2 s11, W H s10], [W H s01, H^2 s00]]; with its eigenvalues
/// l1 >= l2 > 0, l = (C_xx + C_yy)/2 +- sqrt(((C_xx - C_yy)/2)^2 + C_xy^2), the semi-axes are
/// rx = radius sqrt(l1), ry = radius sqrt(l2) and the angle is that of l1's eigenvector,
/// atan2(2 C_xy, C_xx - C_yy) / 2. For a Gaussian, radius r holds the mass 1 - exp(-r^2 / 2).
/// Throws std::invalid_argument naming the argument and its value for a non-finite mean, a
/// covariance that is not finite, symmetric (to 1e-9 relative) and positive definite
/// (s00 > 0, det > 0), a radius that is not finite and > 0, or a frame with a non-positive size.
Ellipse covariance_ellipse(const std::array<double, 2>& mean, const std::array<double, 4>& covariance, double radius,
                           const Frame& frame);

/// <ellipse class="css_class" cx cy rx ry transform="rotate(angle cx cy)"></ellipse>.
std::string ellipse_svg(const Ellipse& ellipse, std::string_view css_class);

}  // namespace kit
