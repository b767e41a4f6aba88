// One measurement over several seeds (an accuracy, a training time): its mean and sample
// standard deviation, as JSON and as table text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kit {

struct Summary {
  double mean = 0.0;
  double sd = 0.0;
};

/// Mean and sample standard deviation sqrt(sum (v - mean)^2 / (n - 1)) of a series; the sd is
/// NaN for one value (a sample sd needs two), both are NaN for none.
Summary summarize(const std::vector<double>& values);

/// {"per_seed": [...], "mean": m, "sd": s}; a non-finite value or statistic is null.
nlohmann::json series_json(const std::vector<double>& values);

/// "mean ± sd" of scale * values with `decimals` digits ("mean ± n/a" for one value), or "n/a"
/// for none (scale 100 shows fractions as percentages).
std::string mean_sd_text(const std::vector<double>& values, double scale, int decimals);

}  // namespace kit
