// A pixel rectangle of a scene and its place in sparcon's unit square of image positions.
//
// Pixel (i, k) of an H x W canvas covers [i, i + 1) x [k, k + 1) in pixel units (rows down,
// columns across) and is centred at t = ((i + 1/2) / H, (k + 1/2) / W) (docs/math.md, kit/svg.h).
// A Box holds the pixels top <= i < bottom, left <= k < right: in positions it is the rectangle
// t0 in [top / H, bottom / H], t1 in [left / W, right / W].
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace vqa {

struct Box {
  int top = 0, left = 0, bottom = 0, right = 0;  ///< half-open: rows [top, bottom), cols [left, right)

  [[nodiscard]] int height() const { return bottom - top; }
  [[nodiscard]] int width() const { return right - left; }
  [[nodiscard]] long area() const { return static_cast<long>(height()) * width(); }
  [[nodiscard]] bool empty() const { return bottom <= top || right <= left; }
  /// The centre in pixel units: ((top + bottom) / 2, (left + right) / 2).
  [[nodiscard]] std::array<double, 2> centre() const { return {(top + bottom) / 2.0, (left + right) / 2.0}; }
  /// Whether pixel (row, col) is inside.
  [[nodiscard]] bool contains(int row, int col) const { return row >= top && row < bottom && col >= left && col < right; }
  bool operator==(const Box&) const = default;
};

/// The common pixels of a and b (an empty box, area 0, when they do not meet).
Box intersect(const Box& a, const Box& b);

/// Whether a and b are at least `gap` pixels apart: a grown by gap on every side does not meet b
/// (gap 0: no common pixel).
bool separated(const Box& a, const Box& b, int gap);

/// A rectangle of positions t0 in [t0_begin, t0_end], t1 in [t1_begin, t1_end].
struct Rect {
  double t0_begin = 0, t0_end = 0, t1_begin = 0, t1_end = 0;

  [[nodiscard]] double area() const { return (t0_end - t0_begin) * (t1_end - t1_begin); }
};

/// The positions of box on a height x width canvas: [top / height, bottom / height] x
/// [left / width, right / width].
Rect to_rect(const Box& box, int height, int width);

/// The area of the intersection of a and b (0 when they do not meet).
double overlap_area(const Rect& a, const Rect& b);

}  // namespace vqa
