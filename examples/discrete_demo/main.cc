// The main job for now: a few example rows through softmax, sparsemax, entmax-1.5 and entmax
// with alpha = 1.25 and 3, side by side, with each map's threshold and support size.
//
//   build/release/examples/discrete_demo/discrete_demo
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sparcon/discrete.h"

namespace {

struct Column {
  std::string name;
  sparcon::Family<double> family;
};

void show(const std::string& title, const std::vector<double>& x) {
  const std::vector<Column> columns = {
      {"softmax", sparcon::Family<double>::softmax()},
      {"sparsemax", sparcon::Family<double>::sparsemax()},
      {"entmax-1.5", sparcon::Family<double>::entmax15()},
      {"alpha=1.25", sparcon::Family<double>::entmax(1.25)},
      {"alpha=3", sparcon::Family<double>::entmax(3.0)},
  };
  const std::size_t n = x.size();
  std::vector<std::vector<double>> p(columns.size(), std::vector<double>(n));
  std::vector<double> tau(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c)
    sparcon::forward(columns[c].family, std::span<const double>(x), std::span<double>(p[c]),
                     sparcon::Rows{1, n}, {}, std::span<double>(&tau[c], 1));

  std::printf("\n%s\n%10s", title.c_str(), "x");
  for (const auto& c : columns) std::printf(" %11s", c.name.c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < n; ++i) {
    std::printf("%10.3g", x[i]);
    for (std::size_t c = 0; c < columns.size(); ++c) std::printf(" %11.6f", p[c][i]);
    std::printf("\n");
  }
  std::printf("%10s", "support");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::size_t support = 0;
    for (double v : p[c]) support += v > 0;
    std::printf(" %8zu/%zu", support, n);
  }
  std::printf("\n%10s", "tau");
  for (double t : tau) std::printf(" %11.5g", t);
  std::printf("\n");
}

}  // namespace

int main() {
  constexpr double kMasked = -std::numeric_limits<double>::infinity();
  std::printf("sparcon: discrete alpha-entmax, p_i = [(alpha-1) x_i - tau]_+^(1/(alpha-1))\n");
  show("A clear winner", {3.0, 1.0, 0.5, 0.2, -1.0});
  show("Three close scores and two far ones", {1.0, 0.9, 0.8, -0.5, -1.0});
  show("Ties", {0.5, 0.5, 0.5, 0.5});
  show("A masked entry (-inf) and large offsets", {1e6 + 0.3, 1e6, 1e6 - 0.4, kMasked, 1e6 - 2.0});
  return 0;
}
