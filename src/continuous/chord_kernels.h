// The chord rule of the 2D expectation for one (density, basis function) pair at alpha = 2 and
// 1.5 (expectation_2d.cc, docs/math.md section 7), its chords evaluated several at a time with
// Google Highway: chord_kernels-inl.h holds the kernel, chord_kernels.cc compiles it for every
// target and dispatches to the best one for the running CPU, as ray_kernels.h does for the rays.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace sparcon::simd {

/// One pair in whitened coordinates rotated to the principal axes of the basis function
/// (x along its long axis, y along its short one): psi = exp(-(x - m1)^2 / (2 s_long^2)
/// - (y - m2)^2 / (2 s_short^2)) and the profile (1 - (x^2 + y^2) / R^2)^k on the disk of radius R.
/// Chord i lies at y_i = R cos v_i and spans x in [-w_i, w_i], w_i = R sin v_i, v_i in (0, pi).
struct ChordPair {
  const double* cos = nullptr;  ///< cos v_i, i < n, readable up to a multiple of 64 past n
  const double* sin = nullptr;  ///< sin v_i > 0
  std::size_t n = 0;            ///< number of chords
  double m1 = 0, m2 = 0;        ///< psi's centre
  double s_long = 1, s_short = 1;
  double radius = 0;
  int k = 1;         ///< 1 or 2
  double scale = 0;  ///< the weight of chord i is scale w_i (w_i / R)^(2k) exp(-(y_i - m2)^2 / (2 s_short^2))
};

/// The rule's sums over the chords that are not negligible, with W_i the weight and
/// I_j = int_{-w}^{w} (1 - x^2 / w^2)^k x^j N(x; m1, s_long^2) dx (profile_moments(k, w, -w, w,
/// m1, s_long)[j]): e0 = sum W I_0, e1 = sum W (I_1, y I_0), e2 = sum W (I_2, y I_1, y^2 I_0)
/// (xx, xy, yy).
struct ChordSums {
  double e0 = 0;
  double e1[2] = {0, 0};
  double e2[3] = {0, 0, 0};

  /// Adds one chord of weight W at height y with moments I_0..I_2.
  void add(double weight, double y, const std::array<double, 3>& moments) {
    const double w0 = weight * moments[0], w1 = weight * moments[1];
    e0 += w0;
    e1[0] += w1;
    e1[1] += w0 * y;
    e2[0] += weight * moments[2];
    e2[1] += w1 * y;
    e2[2] += w0 * y * y;
  }
};

ChordSums chord_sums(const ChordPair& pair);

/// What one target's kernel is, for the tests that run every target.
struct ChordKernelTable {
  ChordSums (*chord_sums)(const ChordPair&);
  std::int64_t target;
};

namespace detail {

/// As reselect_value_kernels (value_kernels.h), for the chord kernel; returns the target in use.
std::int64_t reselect_chord_kernels();

}  // namespace detail

}  // namespace sparcon::simd
