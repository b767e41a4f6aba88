// Speed of the discrete alpha-entmax core (sparcon/discrete.h), float32, side by side with
//
//   copy            std::memcpy of the same matrix into a distinct preallocated buffer
//                   (the memory-bandwidth baseline: one read and one write of every entry),
//   add             x + g into a third matrix (two reads and one write of every entry: the
//                   backward's floor, which reads p and g and writes dx),
//   softmax         the library's softmax forward,
//   sort_sparsemax  a naive row-sorting sparsemax written here (copy, std::sort, prefix sum),
//
// for shapes 65536x16, 32768x32, 8192x64, 4096x128, 1024x512, 128x4096, 64x32000 and 8x1000000
// (the short rows of attention, 2-4 MB each, then long rows), rows drawn N(0,1) ("s1") or 4*N(0,1) ("s4")
// from a fixed seed, and 1 or 2 threads. Every benchmark is named
//
//   <op>/<rows>x<length>/<s1|s4>/t<threads>
//
// with op one of copy, add, spawn (an empty std::jthread started and joined, the per-call cost of
// the library's thread split), sort_sparsemax, and <map>_<fwd|bwd|fwdbwd> for map in softmax,
// sparsemax, entmax15, entmax1.25, entmax1.75, entmax3. "bwd" is the backward alone from the
// forward output p with a random upstream gradient g; "fwdbwd" runs both. Double rows (the same
// values): copy_f64, sparsemax_fwd_f64 and entmax15_fwd_f64.
//
// Timing is wall-clock (UseRealTime). bench/run_discrete.py runs this with repetitions and
// turns the medians into ratio tables (BENCHMARKS.md). --simd_target=AVX2 (or SSE4, AVX3, ...:
// any target compiled in and supported by the CPU) runs the library's kernels of that target
// instead of the best one, to measure what CPUs without the wider vectors get.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <hwy/targets.h>

#include "discrete/simd_kernels.h"
#include "sparcon/discrete.h"
#include "split_rows.h"

namespace {

struct Shape {
  std::size_t rows, length;
};
constexpr Shape kShapes[] = {{65536, 16}, {32768, 32}, {8192, 64},  {4096, 128},
                             {1024, 512}, {128, 4096}, {64, 32000}, {8, 1000000}};
constexpr float kScales[] = {1.0F, 4.0F};
constexpr unsigned kThreads[] = {1, 2};

struct MapCase {
  const char* name;
  sparcon::Family<float> family;
};
const std::vector<MapCase>& map_cases() {
  static const std::vector<MapCase> cases = {
      {"softmax", sparcon::Family<float>::softmax()},
      {"sparsemax", sparcon::Family<float>::sparsemax()},
      {"entmax15", sparcon::Family<float>::entmax15()},
      {"entmax1.25", sparcon::Family<float>::entmax(1.25F)},
      {"entmax1.75", sparcon::Family<float>::entmax(1.75F)},
      {"entmax3", sparcon::Family<float>::entmax(3.0F)},
  };
  return cases;
}

// Input x, upstream gradient g and two output buffers for one (shape, scale); the forward
// outputs of each map (for the backward-alone benchmarks) are made on first use.
struct Data {
  Shape shape;
  std::vector<float> x, g, out, out2;
  std::vector<double> x64, out64;  // x in double, for the _f64 benchmarks (made on first use)
  std::map<std::string, std::vector<float>> p_of_map;

  void make_f64() {
    if (!x64.empty()) return;
    x64.assign(x.begin(), x.end());
    out64.assign(x.size(), 0.0);
  }

  sparcon::Rows rows() const { return {shape.rows, shape.length}; }

  const std::vector<float>& p(const MapCase& m) {
    auto [it, fresh] = p_of_map.try_emplace(m.name);
    if (fresh) {
      it->second.resize(x.size());
      sparcon::forward<float>(m.family, x, it->second, rows(), sparcon::Threads{2});
    }
    return it->second;
  }
};

Data& data(std::size_t shape_index, std::size_t scale_index) {
  static std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<Data>> cache;
  auto& slot = cache[{shape_index, scale_index}];
  if (!slot) {
    slot = std::make_unique<Data>();
    Data& d = *slot;
    d.shape = kShapes[shape_index];
    const std::size_t size = d.shape.rows * d.shape.length;
    std::mt19937_64 rng(20240601 + 17 * shape_index + scale_index);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    d.x.resize(size);
    d.g.resize(size);
    for (float& v : d.x) v = kScales[scale_index] * normal(rng);
    for (float& v : d.g) v = normal(rng);
    d.out.assign(size, 0.0F);  // touch the pages now, not inside a timed region
    d.out2.assign(size, 0.0F);
  }
  return *slot;
}

using sparcon_bench::split_rows;

// The row-sorting reference: sort a copy of the row in decreasing order, find the support
// size k = max{j : 1 + j z_(j) > sum_{i<=j} z_(i)}, tau = (sum_{i<=k} z_(i) - 1) / k.
void sort_sparsemax_rows(const float* x, float* p, std::size_t begin, std::size_t end,
                         std::size_t n) {
  std::vector<float> z(n);
  for (std::size_t r = begin; r < end; ++r) {
    const float* xr = x + r * n;
    float* pr = p + r * n;
    std::copy(xr, xr + n, z.begin());
    std::sort(z.begin(), z.end(), std::greater<float>());
    double cumulative = 0, tau = 0;
    for (std::size_t j = 0; j < n; ++j) {
      cumulative += z[j];
      const double t = (cumulative - 1) / static_cast<double>(j + 1);
      if (z[j] > t) tau = t;
      else break;
    }
    const float tf = static_cast<float>(tau);
    for (std::size_t i = 0; i < n; ++i) pr[i] = std::max(xr[i] - tf, 0.0F);
  }
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.length);
}

void register_all() {
  const auto& maps = map_cases();
  const auto nothing = [](Data&) {};
  for (std::size_t si = 0; si < std::size(kShapes); ++si) {
    for (std::size_t ci = 0; ci < std::size(kScales); ++ci) {
      for (unsigned t : kThreads) {
        std::string suffix = "/";  // built with += : GCC 12 warns falsely on "/" + string
        suffix += shape_name(kShapes[si]);
        suffix += "/s";
        suffix += std::to_string(static_cast<int>(kScales[ci]));
        suffix += "/t";
        suffix += std::to_string(t);
        const auto entries = static_cast<std::int64_t>(kShapes[si].rows * kShapes[si].length);
        // fn(data, threads) is timed; prepare(data) runs before the timing starts.
        auto reg = [&](const std::string& op, auto fn, auto prepare, std::size_t entry_bytes = sizeof(float)) {
          const std::int64_t bytes = entries * static_cast<std::int64_t>(entry_bytes);
          benchmark::RegisterBenchmark((op + suffix).c_str(),
                                       [si, ci, t, fn, prepare, bytes](benchmark::State& state) {
                                         Data& d = data(si, ci);
                                         prepare(d);
                                         for (auto _ : state) {
                                           fn(d, t);
                                           benchmark::ClobberMemory();
                                         }
                                         state.SetBytesProcessed(state.iterations() * bytes);
                                       })
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        };
        reg("copy", [](Data& d, unsigned threads) {
          const std::size_t n = d.shape.length;
          split_rows(d.shape.rows, threads, [&](std::size_t b, std::size_t e) {
            std::memcpy(d.out.data() + b * n, d.x.data() + b * n, (e - b) * n * sizeof(float));
          });
          benchmark::DoNotOptimize(d.out.data());
        }, nothing);
        // The backward's memory floor: two matrices read and one written, as the backward
        // reads p and g and writes dx (the same buffers), with one addition an entry.
        reg(
            "add",
            [](Data& d, unsigned threads) {
              const std::size_t n = d.shape.length;
              split_rows(d.shape.rows, threads, [&](std::size_t b, std::size_t e) {
                const float* x = d.x.data();
                const float* g = d.g.data();
                float* out = d.out2.data();
                for (std::size_t i = b * n; i < e * n; ++i) out[i] = x[i] + g[i];
              });
              benchmark::DoNotOptimize(d.out2.data());
            },
            nothing);
        reg("sort_sparsemax", [](Data& d, unsigned threads) {
          split_rows(d.shape.rows, threads, [&](std::size_t b, std::size_t e) {
            sort_sparsemax_rows(d.x.data(), d.out.data(), b, e, d.shape.length);
          });
          benchmark::DoNotOptimize(d.out.data());
        }, nothing);
        const auto make_f64 = [](Data& d) { d.make_f64(); };
        reg("copy_f64", [](Data& d, unsigned threads) {
          const std::size_t n = d.shape.length;
          split_rows(d.shape.rows, threads, [&](std::size_t b, std::size_t e) {
            std::memcpy(d.out64.data() + b * n, d.x64.data() + b * n, (e - b) * n * sizeof(double));
          });
          benchmark::DoNotOptimize(d.out64.data());
        }, make_f64, sizeof(double));
        for (const auto& [name, family] : {std::pair{"sparsemax", sparcon::Family<double>::sparsemax()},
                                           std::pair{"entmax15", sparcon::Family<double>::entmax15()}}) {
          reg(std::string(name) + "_fwd_f64", [family](Data& d, unsigned threads) {
            sparcon::forward<double>(family, d.x64, d.out64, d.rows(), sparcon::Threads{threads});
            benchmark::DoNotOptimize(d.out64.data());
          }, make_f64, sizeof(double));
        }
        for (const MapCase& m : maps) {
          const MapCase* mp = &m;
          reg(std::string(m.name) + "_fwd", [mp](Data& d, unsigned threads) {
            sparcon::forward<float>(mp->family, d.x, d.out, d.rows(), sparcon::Threads{threads});
            benchmark::DoNotOptimize(d.out.data());
          }, nothing);
          reg(std::string(m.name) + "_bwd", [mp](Data& d, unsigned threads) {
            sparcon::backward<float>(mp->family, d.p(*mp), d.g, d.out2, d.rows(),
                                     sparcon::Threads{threads});
            benchmark::DoNotOptimize(d.out2.data());
          }, [mp](Data& d) { d.p(*mp); });  // the forward output, made once, untimed
          reg(std::string(m.name) + "_fwdbwd", [mp](Data& d, unsigned threads) {
            sparcon::forward<float>(mp->family, d.x, d.out, d.rows(), sparcon::Threads{threads});
            sparcon::backward<float>(mp->family, d.out, d.g, d.out2, d.rows(),
                                     sparcon::Threads{threads});
            benchmark::DoNotOptimize(d.out2.data());
          }, nothing);
        }
      }
    }
  }
  benchmark::RegisterBenchmark("spawn/t2", [](benchmark::State& state) {
    for (auto _ : state) {
      std::jthread worker([] {});
    }
  })->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// Before timing anything: the library's sparsemax must agree with the sorting reference, and
// every map must give rows summing to 1, or the timings mean nothing.
bool sanity_check() {
  bool ok = true;
  for (std::size_t si = 0; si + 1 < std::size(kShapes); ++si) {  // the two smaller shapes
    for (std::size_t ci = 0; ci < std::size(kScales); ++ci) {
      Data& d = data(si, ci);
      const std::size_t n = d.shape.length;
      std::vector<float> ref(d.x.size());
      sort_sparsemax_rows(d.x.data(), ref.data(), 0, d.shape.rows, n);
      sparcon::sparsemax<float>(d.x, d.out, d.rows(), sparcon::Threads{2});
      float worst = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(ref[i] - d.out[i]));
      if (!(worst < 1e-5F)) {
        std::fprintf(stderr, "sanity: sparsemax vs sort reference differ by %g on %s\n", worst,
                     shape_name(d.shape).c_str());
        ok = false;
      }
      for (const MapCase& m : map_cases()) {
        const std::vector<float>& p = d.p(m);
        for (std::size_t r = 0; r < d.shape.rows; ++r) {
          double sum = 0;
          for (std::size_t i = 0; i < n; ++i) sum += p[r * n + i];
          if (!(std::abs(sum - 1) < 1e-3)) {
            std::fprintf(stderr, "sanity: %s row %zu of %s sums to %g\n", m.name, r,
                         shape_name(d.shape).c_str(), sum);
            ok = false;
            break;
          }
        }
      }
    }
  }
  return ok;
}

// Restricts the library's kernels to the SIMD target named `name`; false if it is not both
// compiled in and supported by this CPU.
bool use_simd_target(const std::string& name) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (name != hwy::TargetName(target)) continue;
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    return sparcon::simd::detail::reselect_kernels() == target;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // --skip_check: no correctness check at start (for profiling one benchmark with perf).
  // --simd_target=NAME: see the top of this file.
  bool check = true;
  const std::string target_flag = "--simd_target=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--skip_check") {
      check = false;
    } else if (arg.rfind(target_flag, 0) == 0) {
      const std::string name = arg.substr(target_flag.size());
      if (!use_simd_target(name)) {
        std::fprintf(stderr, "--simd_target: '%s' is not a SIMD target compiled in and supported here (",
                     name.c_str());
        for (const std::int64_t target : hwy::SupportedAndGeneratedTargets())
          std::fprintf(stderr, " %s", hwy::TargetName(target));
        std::fprintf(stderr, " )\n");
        return 1;
      }
    } else {
      continue;
    }
    std::copy(argv + i + 1, argv + argc, argv + i);
    --argc;
    --i;
  }
  benchmark::AddCustomContext("simd_target", hwy::TargetName(sparcon::simd::detail::kernel_target()));
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (check && !sanity_check()) return 2;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
