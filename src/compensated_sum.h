// Compensated summation (Knuth's TwoSum, branch-free): the sum of many doubles with an error
// independent of their number (to first order), for thresholds and losses that must be exact
// to rounding.
#pragma once

namespace sparcon::detail {

class CompensatedSum {
 public:
  CompensatedSum& operator+=(double v) {
    const double t = sum_ + v;
    const double v_part = t - sum_;
    compensation_ += (sum_ - (t - v_part)) + (v - v_part);  // the exact rounding error of t
    sum_ = t;
    return *this;
  }
  [[nodiscard]] double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace sparcon::detail
