// Exits 0 when an installed sparcon computes sparsemax([1, 0.5, -1]) = [0.75, 0.25, 0].
#include <cmath>
#include <vector>

#include <sparcon/discrete.h>

int main() {
  const std::vector<double> x = {1.0, 0.5, -1.0};
  std::vector<double> p(3);
  sparcon::sparsemax<double>(x, p, sparcon::Rows{1, 3});
  const bool ok = std::abs(p[0] - 0.75) < 1e-15 && std::abs(p[1] - 0.25) < 1e-15 && p[2] == 0;
  return ok ? 0 : 1;
}
