// Every basis function of a call seen from one 2D density at alpha > 1 (expectation_2d.cc,
// docs/math.md section 7): its centre and widths in the whitened frame rotated to its principal
// axes, where the chord rule integrates, and an upper bound of log r that orders and cuts the
// pairs. Evaluated for all basis functions at once, a vector of them at a time, with Google
// Highway: pair_frames-inl.h holds the kernel, pair_frames.cc compiles it for every target and
// dispatches to the best one for the running CPU, as chord_kernels.h does for the chords.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sparcon::simd {

/// The basis functions psi_j = N(t; c_j, S_j) as arrays, entry j of each for psi_j, readable up
/// to a multiple of 64 entries past n (padded with any positive definite S).
struct BasisArrays {
  const double* c0 = nullptr;  ///< c_j
  const double* c1 = nullptr;
  const double* p00 = nullptr;  ///< P_j = S_j^-1, symmetric
  const double* p01 = nullptr;
  const double* p11 = nullptr;
  const double* det_p = nullptr;  ///< det P_j
  std::size_t n = 0;
};

/// One density: mu, the symmetric square roots Sigma^(1/2) and Sigma^(-1/2), its support, the
/// disk of radius R in whitened coordinates Sigma^(-1/2) (t - mu), and its profile
/// p = C (1 - |u|^2 / R^2)_+^k there.
struct DensityFrame {
  double mu0 = 0, mu1 = 0;
  double root00 = 1, root01 = 0, root11 = 1;        ///< Sigma^(1/2)
  double inverse00 = 1, inverse01 = 0, inverse11 = 1;  ///< Sigma^(-1/2)
  double det_sigma = 1;
  double radius = 1;           ///< R
  double k = 1;                ///< 1 / (alpha - 1)
  double log_coefficient = 0;  ///< log C
  double log_gamma = 0;        ///< lgamma(k + 1)
};

/// Outputs, n entries each (writable up to a multiple of 64 past n). With
/// A = Sigma^(1/2) P Sigma^(1/2) = frame diag(1 / s_long^2, 1 / s_short^2) frame^T (s_long >= s_short)
/// and frame = [(-sin phi, cos phi) (cos phi, sin phi)] (columns: the long axis, the short
/// axis; cos phi >= 0), psi in (x, y) = frame^T Sigma^(-1/2) (t - mu) is a Gaussian of centre
/// (m1, m2) = frame^T Sigma^(-1/2) (c - mu) and covariance diag(s_long^2, s_short^2).
/// log_bound >= log r = log E_p[psi] (see pair_frames-inl.h).
struct PairFrames {
  double* cos = nullptr;  ///< cos phi
  double* sin = nullptr;  ///< sin phi
  double* m1 = nullptr;
  double* m2 = nullptr;
  double* s_long = nullptr;
  double* s_short = nullptr;
  double* log_bound = nullptr;
};

void pair_frames(const DensityFrame& density, const BasisArrays& basis, const PairFrames& out);

/// What one target's kernel is, for the tests that run every target.
struct PairFramesTable {
  void (*pair_frames)(const DensityFrame&, const BasisArrays&, const PairFrames&);
  std::int64_t target;
};

namespace detail {

/// As reselect_chord_kernels (chord_kernels.h), for this kernel; returns the target in use.
std::int64_t reselect_pair_frames();

}  // namespace detail

}  // namespace sparcon::simd
