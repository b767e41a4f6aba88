// Statistics over seeds (kit/seed_series.h).
#include "kit/seed_series.h"

#include <cmath>
#include <limits>

#include "kit/format.h"

namespace kit {
namespace {

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace

Summary summarize(const std::vector<double>& values) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (values.empty()) return {nan, nan};
  double sum = 0.0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  if (values.size() == 1) return {mean, nan};  // a sample sd needs two values
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size() - 1))};
}

nlohmann::json series_json(const std::vector<double>& values) {
  const Summary s = summarize(values);
  nlohmann::json per_seed = nlohmann::json::array();
  for (double v : values) per_seed.push_back(number_or_null(v));
  return {{"per_seed", per_seed}, {"mean", number_or_null(s.mean)}, {"sd", number_or_null(s.sd)}};
}

std::string mean_sd_text(const std::vector<double>& values, double scale, int decimals) {
  const Summary s = summarize(values);
  if (!std::isfinite(s.mean)) return "n/a";
  return fixed(scale * s.mean, decimals) + " ± " + fixed(scale * s.sd, decimals);
}

}  // namespace kit
