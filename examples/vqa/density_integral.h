// Integrals of sparcon's 2D continuous entmax densities (sparcon/continuous.h, Density2D) over
// rectangles of positions, and the area of their elliptical supports inside rectangles: the
// continuous side of the localisation metrics (localisation.h).
//
// Positions t = (t0, t1), t0 down the rows, t1 across (box.h). With d = t - mu, Sigma the scale,
// P = Sigma^-1 and q(d) = d^T P d = p11 (d1 - m(d0))^2 + d0^2 / S00, m(d0) = (S01 / S00) d0:
//  - alpha = 1: p is N(mu, Sigma), t0 ~ N(mu0, S00) and t1 | t0 ~ N(mu1 + m(d0), S11 - S01^2 / S00),
//      mass(R) = int_{R's t0} N(d0; 0, S00) [Phi((t1_end - mu1 - m) / s) - Phi((t1_begin - mu1 - m) / s)] dt0,
//    the outer integral by composite 8-point Gauss-Legendre over |d0| <= 12 sqrt(S00), panels of at
//    most sqrt(S00) / 2.
//  - alpha > 1: p(t) = ((alpha-1)/2)^e (r2 - q(d))_+^e with e = 1/(alpha-1) and r2 = -2 tau (the
//    support is q <= r2). At fixed d0 the support is the chord |d1 - m| <= h, h = sqrt(c / p11),
//    c = r2 - d0^2 / S00; with d1 = m + h sin(theta) the inner integral is
//      ((alpha-1)/2)^e c^e h int cos(theta)^(2e+1) dtheta
//    over theta in [asin(clamp((t1_begin - mu1 - m) / h)), asin(clamp((t1_end - mu1 - m) / h))],
//    and the outer one, in d0 = H sin(phi), H = sqrt(r2 S00), is cut where the ellipse's edge meets
//    the lines t1 = t1_begin and t1 = t1_end (the kinks of the inner integral), each piece by
//    composite Gauss-Legendre: smooth integrands, so the error is near rounding (tested against
//    fine-grid sums in tests/examples/vqa_localisation_test.cc).
#pragma once

#include "box.h"
#include "kit/matrix.h"
#include "sparcon/continuous.h"

namespace vqa {

using Density = sparcon::Density2D<double>;

/// int_R p(t) dt, in [0, 1] (the mass outside R, inside or outside the unit square, is not
/// counted). An empty or inverted rectangle gives 0.
double density_mass(const Density& density, const Rect& rect);

/// The area of {t in R : t in the support of p} for alpha > 1 (the ellipse q <= r2). Throws
/// std::invalid_argument for alpha = 1 (the support is the whole plane).
double support_area(const Density& density, const Rect& rect);

/// The density's mass over each cell of a rows x cols grid of the unit square (cell (r, c) =
/// [r / rows, (r + 1) / rows] x [c / cols, (c + 1) / cols]): the continuous attention as a map
/// over the discrete attention's cells (heat maps, the report). Sums to the mass inside the
/// unit square. Throws std::invalid_argument for rows or cols 0.
kit::Matrix cell_masses(const Density& density, std::size_t rows, std::size_t cols);

}  // namespace vqa
