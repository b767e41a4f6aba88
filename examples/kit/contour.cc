// Marching squares (kit/contour.h).
#include "kit/contour.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "kit/html.h"

namespace kit {

std::vector<Segment> iso_contour(const Matrix& samples, double level) {
  check_matrix(samples, "iso_contour", "samples");
  if (!std::isfinite(level)) {
    std::ostringstream value;
    value << level;
    throw std::invalid_argument("iso_contour: level = " + value.str() + " is not finite");
  }
  if (samples.rows < 2 || samples.cols < 2)
    throw std::invalid_argument("iso_contour: samples is " + std::to_string(samples.rows) + " x " +
                                std::to_string(samples.cols) + "; a contour needs at least 2 x 2");
  const double rows = static_cast<double>(samples.rows), cols = static_cast<double>(samples.cols);
  auto position = [&](double i, double k) { return Point{(i + 0.5) / rows, (k + 0.5) / cols}; };
  // Where the level crosses the edge from sample (i, k) to sample (j, l).
  auto cut = [&](std::size_t i, std::size_t k, std::size_t j, std::size_t l) {
    const double vp = samples(i, k), vq = samples(j, l);
    const double s = (level - vp) / (vq - vp);
    return position(static_cast<double>(i) + s * (static_cast<double>(j) - static_cast<double>(i)),
                    static_cast<double>(k) + s * (static_cast<double>(l) - static_cast<double>(k)));
  };
  std::vector<Segment> segments;
  for (std::size_t i = 0; i + 1 < samples.rows; ++i)
    for (std::size_t k = 0; k + 1 < samples.cols; ++k) {
      // Corners a (i, k), b (i, k+1), c (i+1, k+1), d (i+1, k); edges top a-b, right b-c,
      // bottom d-c, left a-d.
      const bool a = samples(i, k) >= level, b = samples(i, k + 1) >= level;
      const bool c = samples(i + 1, k + 1) >= level, d = samples(i + 1, k) >= level;
      Point top{}, right{}, bottom{}, left{};
      std::vector<Point*> cuts;  // in the order top, right, bottom, left
      if (a != b) cuts.push_back(&(top = cut(i, k, i, k + 1)));
      if (b != c) cuts.push_back(&(right = cut(i, k + 1, i + 1, k + 1)));
      if (d != c) cuts.push_back(&(bottom = cut(i + 1, k, i + 1, k + 1)));
      if (a != d) cuts.push_back(&(left = cut(i, k, i + 1, k)));
      if (cuts.size() == 2) {
        segments.push_back({*cuts[0], *cuts[1]});
      } else if (cuts.size() == 4) {  // a saddle: a == c != b == d
        const double centre = 0.25 * (samples(i, k) + samples(i, k + 1) + samples(i + 1, k + 1) + samples(i + 1, k));
        if (a == (centre >= level)) {  // a and c joined through the centre: cut off b and d
          segments.push_back({top, right});
          segments.push_back({bottom, left});
        } else {  // b and d joined: cut off a and c
          segments.push_back({left, top});
          segments.push_back({right, bottom});
        }
      }
    }
  return segments;
}

std::string contour_svg(const std::vector<Segment>& segments, const Frame& frame, std::string_view css_class) {
  std::string d;
  for (const auto& s : segments) {
    if (!d.empty()) d += ' ';
    d.append("M").append(svg_number(frame.x(s.a.t1))).append(" ").append(svg_number(frame.y(s.a.t0)));
    d.append(" L").append(svg_number(frame.x(s.b.t1))).append(" ").append(svg_number(frame.y(s.b.t0)));
  }
  return "<path class=\"" + html_escape(css_class) + "\" d=\"" + d + "\" fill=\"none\"></path>";
}

}  // namespace kit
