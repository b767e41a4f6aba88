// One build of the core behind a C entry point, so that two builds (a base and a change) can be
// loaded into one process side by side (driver.cc; see compare.sh). Compiled and linked per build
// into a shared object with that build's headers and libsparcon.a.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "sparcon/discrete.h"

// op 0: p = map(x); op 1: dx = the backward of map at p with upstream gradient g; op 2 (an alpha
// only): the gradient to a per-row alpha of that value, d alpha into dx[0, rows). map is
// "softmax", "sparsemax", "entmax15" or an alpha ("1.75"). Rows of n floats, one thread.
extern "C" void compare_builds_call(int op, const char* map, const float* x, float* p,
                                    const float* g, float* dx, std::size_t rows, std::size_t n) {
  const std::string m = map;
  const auto family = m == "sparsemax"  ? sparcon::Family<float>::sparsemax()
                      : m == "entmax15" ? sparcon::Family<float>::entmax15()
                      : m == "softmax"  ? sparcon::Family<float>::softmax()
                                        : sparcon::Family<float>::entmax(std::stof(m));
  const sparcon::Rows shape{rows, n};
  const std::size_t size = rows * n;
  if (op == 0) {
    sparcon::forward<float>(family, {x, size}, {p, size}, shape, sparcon::Threads{1});
  } else if (op == 2) {
    static thread_local std::vector<float> alpha;
    alpha.assign(rows, std::stof(m));
    sparcon::entmax_alpha_backward<float>({p, size}, {g, size}, {dx, rows}, shape,
                                          sparcon::PerRow<float>(std::span<const float>(alpha)),
                                          sparcon::Threads{1});
  } else {
    sparcon::backward<float>(family, {p, size}, {g, size}, {dx, size}, shape, sparcon::Threads{1});
  }
}
