// Compensated summation (Knuth's TwoSum, branch-free): the sum of many doubles with an error
// independent of their number (to first order), for thresholds and losses that must be exact
// to rounding.
#pragma once

namespace sparcon::detail {

/// The rounding error of total = a + b (rounded), exactly: a + b = total + the result (Knuth's
/// TwoSum, branch-free).
inline double two_sum_error(double a, double b, double total) {
  const double b_part = total - a;
  return (a - (total - b_part)) + (b - b_part);
}

class CompensatedSum {
 public:
  CompensatedSum& operator+=(double v) {
    const double t = sum_ + v;
    compensation_ += two_sum_error(sum_, v, t);
    sum_ = t;
    return *this;
  }
  [[nodiscard]] double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace sparcon::detail
