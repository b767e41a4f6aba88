// The results table (results.h).
#include "results.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "atomic_file.h"

namespace spam {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

namespace {

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json series_json(const std::vector<double>& values) {
  const Summary s = summarize(values);
  nlohmann::json per_seed = nlohmann::json::array();
  for (double v : values) per_seed.push_back(number_or_null(v));
  return {{"per_seed", per_seed}, {"mean", number_or_null(s.mean)}, {"sd", number_or_null(s.sd)}};
}

// A table cell: '|' would end the cell and a line break the row.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
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

nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : results) {
    variants.push_back({{"name", r.name},
                        {"family", r.family},
                        {"seeds", r.accuracies.size()},
                        {"accuracy", series_json(r.accuracies)},
                        {"train_seconds", series_json(r.train_seconds)},
                        {"sparsity", series_json(r.sparsity)}});
  }
  return {{"run", run_info}, {"variants", variants}};
}

std::string results_table_markdown(const std::vector<VariantResult>& results) {
  std::string out =
      "| variant | accuracy (%, mean ± sd) | seeds | train time (s, mean) | sparsity (%, mean) |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const auto& r : results) {
    const Summary accuracy = summarize(r.accuracies);
    const std::string accuracy_text = std::isfinite(accuracy.mean)
                                          ? fixed(100.0 * accuracy.mean, 2) + " ± " + fixed(100.0 * accuracy.sd, 2)
                                          : "n/a";
    out += "| " + cell(r.name) + " | " + accuracy_text + " | " + std::to_string(r.accuracies.size()) + " | " +
           fixed(summarize(r.train_seconds).mean, 1) + " | " + fixed(100.0 * summarize(r.sparsity).mean, 1) +
           " |\n";
  }
  return out;
}

void write_results(const std::filesystem::path& dir, const std::vector<VariantResult>& results,
                   const nlohmann::json& run_info) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the results directory " + dir.string() + ": " + ec.message());

  write_atomically(dir / "results.json", results_json(results, run_info).dump(2) + "\n");

  std::string md = "# Text classification results\n\n";
  if (run_info.is_object() && !run_info.empty()) {
    for (const auto& [key, value] : run_info.items())
      md += "- " + one_line(key) + ": " + one_line(value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
    md += "\n";
  }
  md += results_table_markdown(results);
  write_atomically(dir / "results.md", md);
}

}  // namespace spam
