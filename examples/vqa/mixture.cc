#include "mixture.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vqa {
namespace {

struct Cells {
  std::vector<std::array<double, 2>> t;
  std::vector<double> p;  ///< normalised
};

Cells cells_of(const kit::Matrix& w, const char* function) {
  kit::check_matrix(w, function, "weights");
  Cells out;
  double total = 0;
  for (std::size_t r = 0; r < w.rows; ++r)
    for (std::size_t c = 0; c < w.cols; ++c) {
      const double v = w(r, c);
      if (v < 0) throw std::invalid_argument(std::string(function) + ": a negative weight (" + std::to_string(v) + ")");
      out.t.push_back({(r + 0.5) / static_cast<double>(w.rows), (c + 0.5) / static_cast<double>(w.cols)});
      out.p.push_back(v);
      total += v;
    }
  if (!(total > 0)) throw std::invalid_argument(std::string(function) + ": the weights sum to 0");
  for (auto& v : out.p) v /= total;
  return out;
}

double gaussian(const std::array<double, 2>& t, const Component& k) {
  const auto& s = k.covariance;
  const double det = s[0] * s[3] - s[1] * s[2];
  const double d0 = t[0] - k.mean[0], d1 = t[1] - k.mean[1];
  const double q = (s[3] * d0 * d0 - (s[1] + s[2]) * d0 * d1 + s[0] * d1 * d1) / det;
  return std::exp(-0.5 * q) / (2 * M_PI * std::sqrt(det));
}

}  // namespace

std::vector<Component> fit_mixture(const kit::Matrix& weights, const EmOptions& options) {
  const char* f = "vqa::fit_mixture";
  const Cells cells = cells_of(weights, f);
  const int K = options.components;
  const auto positive = static_cast<int>(std::count_if(cells.p.begin(), cells.p.end(), [](double v) { return v > 0; }));
  if (K < 1 || K > 8 || K > positive)
    throw std::invalid_argument(std::string(f) + ": " + std::to_string(K) + " components for " + std::to_string(positive) +
                                " cells with weight > 0 (1..8 and at most that many)");
  if (options.steps < 0) throw std::invalid_argument(std::string(f) + ": steps < 0");
  if (!(options.ridge > 0)) throw std::invalid_argument(std::string(f) + ": ridge must be > 0");
  const std::size_t n = cells.p.size();

  // The start.
  std::array<double, 2> m{};
  for (std::size_t l = 0; l < n; ++l)
    for (int d = 0; d < 2; ++d) m[d] += cells.p[l] * cells.t[l][d];
  double trace = 0;
  for (std::size_t l = 0; l < n; ++l)
    for (int d = 0; d < 2; ++d) trace += cells.p[l] * (cells.t[l][d] - m[d]) * (cells.t[l][d] - m[d]);
  const double var = trace / (2 * K) + options.ridge;
  std::vector<Component> comps;
  comps.push_back({1.0 / K, cells.t[static_cast<std::size_t>(std::max_element(cells.p.begin(), cells.p.end()) - cells.p.begin())],
                   {var, 0, 0, var}});
  while (static_cast<int>(comps.size()) < K) {
    std::size_t best = 0;
    double best_score = -1;
    for (std::size_t l = 0; l < n; ++l) {
      double d2 = INFINITY;
      for (const auto& k : comps)
        d2 = std::min(d2, std::pow(cells.t[l][0] - k.mean[0], 2) + std::pow(cells.t[l][1] - k.mean[1], 2));
      const double score = cells.p[l] * d2;
      if (score > best_score) {
        best_score = score;
        best = l;
      }
    }
    comps.push_back({1.0 / K, cells.t[best], {var, 0, 0, var}});
  }

  std::vector<double> g(n * static_cast<std::size_t>(K));
  for (int step = 0; step < options.steps; ++step) {
    for (std::size_t l = 0; l < n; ++l) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += g[l * K + k] = comps[k].weight * gaussian(cells.t[l], comps[k]);
      for (int k = 0; k < K; ++k) g[l * K + k] = sum > 0 ? g[l * K + k] / sum : 1.0 / K;
    }
    for (int k = 0; k < K; ++k) {
      double pi = 0;
      std::array<double, 2> mu{};
      for (std::size_t l = 0; l < n; ++l) {
        const double a = cells.p[l] * g[l * K + k];
        pi += a;
        mu[0] += a * cells.t[l][0];
        mu[1] += a * cells.t[l][1];
      }
      comps[k].weight = pi;
      if (pi < 1e-12) continue;
      mu = {mu[0] / pi, mu[1] / pi};
      std::array<double, 4> s{};
      for (std::size_t l = 0; l < n; ++l) {
        const double a = cells.p[l] * g[l * K + k] / pi, d0 = cells.t[l][0] - mu[0], d1 = cells.t[l][1] - mu[1];
        s[0] += a * d0 * d0;
        s[1] += a * d0 * d1;
        s[3] += a * d1 * d1;
      }
      s[2] = s[1];
      s[0] += options.ridge;
      s[3] += options.ridge;
      comps[k].mean = mu;
      comps[k].covariance = s;
    }
  }
  std::stable_sort(comps.begin(), comps.end(), [](const Component& a, const Component& b) { return a.weight > b.weight; });
  return comps;
}

double weighted_log_likelihood(const kit::Matrix& weights, const std::vector<Component>& components) {
  const Cells cells = cells_of(weights, "vqa::weighted_log_likelihood");
  double sum = 0;
  for (std::size_t l = 0; l < cells.p.size(); ++l) {
    if (cells.p[l] == 0) continue;
    double mix = 0;
    for (const auto& k : components) mix += k.weight * gaussian(cells.t[l], k);
    sum += cells.p[l] * std::log(mix);
  }
  return sum;
}

}  // namespace vqa
