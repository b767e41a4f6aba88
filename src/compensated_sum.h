// Neumaier's compensated summation: the sum of many doubles with an error independent of
// their number (to first order), for thresholds and losses that must be exact to rounding.
#pragma once

#include <cmath>

namespace sparcon::detail {

class CompensatedSum {
 public:
  CompensatedSum& operator+=(double v) {
    const double t = sum_ + v;
    compensation_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
    return *this;
  }
  [[nodiscard]] double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace sparcon::detail
