// Central finite differences of the long-double references, for the gradient tests, and the
// choice of rows on which they are valid (no entry near a kink of the map).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "map_cases.h"
#include "reference.h"

namespace sparcon_test {

/// Distance (in the units of the threshold) of the row's nearest entry to a kink of the map: the
/// support boundary, and for the budget also the cap p = 1. Infinite for dense maps.
inline LD distance_to_kink(const MapCase& c, std::span<const LD> x, const ref::Result& r) {
  LD nearest = ref::kInf;
  if (c.map == sparcon::Map::budget) {
    bool active = false;
    for (LD v : r.p) active = active || (v > 0 && v < 1);
    if (active) {  // tau is unique
      for (LD v : x) nearest = std::min({nearest, std::fabs(v - r.tau), std::fabs(v - r.tau - 1)});
      return nearest;
    }
    // p in {0, 1}: tau may move in a flat region; half its width is how far the row is from a kink
    LD lowest_one = ref::kInf, highest_zero = -ref::kInf;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (r.p[i] == 1) lowest_one = std::min(lowest_one, x[i]);
      if (r.p[i] == 0) highest_zero = std::max(highest_zero, x[i]);
    }
    return (lowest_one - 1 - highest_zero) / 2;
  }
  if (!is_sparse(c)) return nearest;
  for (LD b : r.base) nearest = std::min(nearest, std::fabs(b));
  return nearest;
}

/// A random row (scale * N(0,1)) whose entries all lie at least `margin` from a kink of the map.
inline std::vector<double> row_away_from_kinks(const MapCase& c, std::size_t length, double scale,
                                               std::mt19937_64& rng, LD margin = 0.02L) {
  std::normal_distribution<double> normal(0.0, scale);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    std::vector<double> x(length);
    for (double& v : x) v = normal(rng);
    const std::vector<LD> xl(x.begin(), x.end());
    const ref::Result r = reference_row(c.map, static_cast<LD>(c.parameter), xl);
    if (distance_to_kink(c, xl, r) > margin) return x;
  }
  ADD_FAILURE() << "no row away from the kinks of " << c.name;
  return std::vector<double>(length, 0.0);
}

/// d/dx_j <g, f(x)> for every j by central differences of step h.
inline std::vector<LD> gradient_by_differences(const std::function<std::vector<LD>(const std::vector<LD>&)>& f,
                                               const std::vector<LD>& x, const std::vector<LD>& g, LD h) {
  auto dot = [&](const std::vector<LD>& y) {
    const std::vector<LD> p = f(y);
    LD s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) s += g[i] * p[i];
    return s;
  };
  std::vector<LD> grad(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) {
    std::vector<LD> up = x, down = x;
    up[j] += h;
    down[j] -= h;
    grad[j] = (dot(up) - dot(down)) / (2 * h);
  }
  return grad;
}

/// A batch for the backward tests: rows of the map away from its kinks (scale 1 on even rows,
/// 2.5 on odd ones), the reference p, upstream gradients g ~ N(0, 1), and per row the gradient
/// of <g, p(x)> by central differences of step `step` of the reference.
struct BackwardRows {
  std::vector<double> x, p, g;
  std::vector<std::vector<LD>> fd;
};
inline BackwardRows backward_rows(const MapCase& c, sparcon::Rows rows, std::mt19937_64& rng, LD step) {
  BackwardRows b;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t r = 0; r < rows.count; ++r) {
    const std::vector<double> row = row_away_from_kinks(c, rows.length, r % 2 == 0 ? 1.0 : 2.5, rng);
    const std::vector<LD> xl(row.begin(), row.end());
    const ref::Result want = reference_row(c.map, static_cast<LD>(c.parameter), xl);
    std::vector<LD> gl(rows.length);
    for (std::size_t i = 0; i < rows.length; ++i) {
      b.g.push_back(normal(rng));
      gl[i] = b.g.back();
      b.p.push_back(static_cast<double>(want.p[i]));
    }
    b.x.insert(b.x.end(), row.begin(), row.end());
    b.fd.push_back(gradient_by_differences(
        [&](const std::vector<LD>& y) { return reference_row(c.map, static_cast<LD>(c.parameter), y).p; }, xl, gl, step));
  }
  return b;
}

/// Relative agreement with an absolute floor: |got - want| <= rel * max|want| + floor.
inline ::testing::AssertionResult gradients_agree(std::span<const double> got, const std::vector<LD>& want,
                                                  LD rel = 1e-6L, LD floor = 1e-9L) {
  LD scale = 0;
  for (LD v : want) scale = std::max(scale, std::fabs(v));
  const LD tol = rel * scale + floor;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      return ::testing::AssertionFailure() << "entry " << i << ": got " << got[i] << ", finite differences "
                                           << static_cast<double>(want[i]) << " (tolerance "
                                           << static_cast<double>(tol) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sparcon_test
