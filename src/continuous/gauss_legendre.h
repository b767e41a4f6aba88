// Gauss-Legendre rules on [-1, 1], computed once by Newton's method on P_n.
#pragma once

#include <array>
#include <cmath>
#include <numbers>

namespace sparcon::detail {

template <int N>
struct GaussLegendre {
  std::array<double, N> x{}, w{};

  GaussLegendre() {
    for (int i = 0; i < N; ++i) {
      double z = std::cos(std::numbers::pi * (i + 0.75) / (N + 0.5)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = z;
        for (int j = 2; j <= N; ++j) {
          const double p2 = ((2.0 * j - 1) * z * p1 - (j - 1.0) * p0) / j;
          p0 = p1;
          p1 = p2;
        }
        dp = N * (z * p1 - p0) / (z * z - 1);
        const double step = p1 / dp;
        z -= step;
        if (std::abs(step) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
  }

  /// The rule, built on first use.
  static const GaussLegendre& get() {
    static const GaussLegendre rule;
    return rule;
  }
};

}  // namespace sparcon::detail
