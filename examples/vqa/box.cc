#include "box.h"

#include <algorithm>

namespace vqa {

Box intersect(const Box& a, const Box& b) {
  Box out{std::max(a.top, b.top), std::max(a.left, b.left), std::min(a.bottom, b.bottom), std::min(a.right, b.right)};
  if (out.empty()) return Box{};
  return out;
}

bool separated(const Box& a, const Box& b, int gap) {
  const Box grown{a.top - gap, a.left - gap, a.bottom + gap, a.right + gap};
  return intersect(grown, b).empty();
}

Rect to_rect(const Box& box, int height, int width) {
  return {static_cast<double>(box.top) / height, static_cast<double>(box.bottom) / height,
          static_cast<double>(box.left) / width, static_cast<double>(box.right) / width};
}

double overlap_area(const Rect& a, const Rect& b) {
  const double h = std::min(a.t0_end, b.t0_end) - std::max(a.t0_begin, b.t0_begin);
  const double w = std::min(a.t1_end, b.t1_end) - std::max(a.t1_begin, b.t1_begin);
  return h > 0 && w > 0 ? h * w : 0.0;
}

}  // namespace vqa
