// Times two builds of the core in one process (see compare.sh): each build's shim (shim.cc) is
// loaded with dlopen(RTLD_LOCAL), and the two are called in turn, in slices of 4 ms (the best of
// 5 slices per turn), for `rounds` rounds, the order swapped every round. On a shared machine
// whose speed drifts by 10-40% within minutes, the ratio of the two turns of one round moves far
// less than the times do; the median of those paired ratios is the figure.
//
//   driver BASE.so NEW.so MAP ROWS N [ROUNDS=16] [fwd|bwd|dalpha] [SCALE=1]
//
// Prints both builds' minimum and median time per call (µs) and base / new, the paired median
// with its quartiles (> 1: the new build is faster). Rows are SCALE * N(0,1) from a fixed seed.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {
using Call = void (*)(int, const char*, const float*, float*, const float*, float*, std::size_t,
                      std::size_t);

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s BASE.so NEW.so MAP ROWS N [ROUNDS] [fwd|bwd|dalpha] [SCALE]\n",
                 argv[0]);
    return 2;
  }
  Call call[2];
  for (int b = 0; b < 2; ++b) {
    void* handle = dlopen(argv[1 + b], RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[1 + b], dlerror());
      return 1;
    }
    call[b] = reinterpret_cast<Call>(dlsym(handle, "compare_builds_call"));
    if (call[b] == nullptr) {
      std::fprintf(stderr, "%s has no compare_builds_call\n", argv[1 + b]);
      return 1;
    }
  }
  const std::string map = argv[3];
  const std::size_t rows = std::stoul(argv[4]), n = std::stoul(argv[5]);
  const int rounds = argc > 6 ? std::atoi(argv[6]) : 16;
  const std::string op_name = argc > 7 ? argv[7] : "fwd";
  const int op = op_name == "bwd" ? 1 : op_name == "dalpha" ? 2 : 0;
  const float scale = argc > 8 ? std::strtof(argv[8], nullptr) : 1.0F;
  std::vector<float> x(rows * n), p(rows * n), g(rows * n), dx(rows * n);
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal(0, 1);
  for (float& v : x) v = scale * normal(rng);
  for (float& v : g) v = normal(rng);
  call[0](0, map.c_str(), x.data(), p.data(), g.data(), dx.data(), rows, n);  // p for the backward
  using Clock = std::chrono::steady_clock;
  std::vector<double> times[2], ratios;
  for (int r = 0; r < rounds; ++r) {
    double per_call[2];
    for (int turn = 0; turn < 2; ++turn) {
      const int b = r % 2 == 0 ? turn : 1 - turn;
      const auto run = [&] {
        call[b](op, map.c_str(), x.data(), p.data(), g.data(), dx.data(), rows, n);
      };
      run();
      double best = 1e300;
      for (int slice = 0; slice < 5; ++slice) {
        const auto start = Clock::now();
        int calls = 0;
        do {
          run();
          ++calls;
        } while (Clock::now() - start < std::chrono::milliseconds(4));
        best = std::min(
            best, std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls);
      }
      per_call[b] = best;
      times[b].push_back(best);
    }
    ratios.push_back(per_call[0] / per_call[1]);
  }
  const auto base = sorted(times[0]), change = sorted(times[1]), q = sorted(ratios);
  std::printf(
      "%s %s %zux%zu scale %g: base min %.1f median %.1f | new min %.1f median %.1f | "
      "base/new paired median %.3f (quartiles %.3f %.3f)\n",
      map.c_str(), op_name.c_str(), rows, n, static_cast<double>(scale), base[0],
      base[base.size() / 2], change[0], change[change.size() / 2], q[q.size() / 2], q[q.size() / 4],
      q[3 * q.size() / 4]);
}
