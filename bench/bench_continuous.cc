// Speed and accuracy of continuous attention (sparcon/attention.h, sparcon/continuous.h),
// float32, side by side with the same computation written naively here:
//
//   naive  dense quadrature of the density on a fine midpoint grid, then the weighted sum:
//          for each example, p on M cells (1D) or M x M cells (2D) covering its support
//          (alpha > 1: [mu - a, mu + a], a = Density1D::half_width(); in 2D the bounding box
//          of the support ellipse, half-extents sqrt(support_radius2 Sigma_ii); alpha = 1:
//          mu +- 8 standard deviations), r_j = sum_i p(t_i) psi_j(t_i) cell (cells with
//          p = 0 skipped), then context = H^T (G r) with G from the same RidgeCache, plain
//          loops. The pdf is written here (inverse of Sigma precomputed per example; tau and
//          the support from the library's Density1D/Density2D<double>, built once per example
//          and call). Inputs, r and outputs are float32 (r is rounded to float between the two
//          steps, as the library does); the quadrature and the sums are in double, as the
//          library computes internally (a float32 accumulation of thousands of cells would cap
//          the naive accuracy near 1e-5 whatever M).
//
// Issue 15's workloads, against discrete softmax attention on the same values, are registered
// at the end: img512 (2D) and seq160 (1D), see register_issue15 and register_issue15_1d.
//
// Problems (fixed seed):
//   1d  batch 64, L = 512 (every length 512), E = 256, GaussianBasis1D<float>::paper(128),
//       RidgeCache1D lambda 0.01; mu ~ U(0.1, 0.9), standard deviation ~ U(0.02, 0.2),
//       sigma2 = Density1D<float>::with_variance(alpha, mu, sd^2).sigma2().
//   2d  batch 64, 14 x 14 images, E = 256, GaussianBasis2D<float>::paper() (N = 100),
//       RidgeCache2D lambda 0.01; mu ~ U(0.2, 0.8)^2, covariance R diag(s1^2, s2^2) R^T with
//       s1, s2 ~ U(0.03, 0.2) and a uniform rotation angle,
//       Sigma = Density2D<float>::with_covariance(alpha, mu, C).sigma().
//   2d broad  the same with s1, s2 ~ U(0.2, 0.5) (attention spread over the image, as at the
//       start of training), E = 1: only the expectation runs on it.
// alpha = 1 (closed form), 2 (closed form / closed-form radial), 1.5 (quadrature path).
// The ridge matrices are computed (the caches warmed) before any timing.
//
// Benchmarks are named <op>/<1d|2d>/a<alpha>/t<threads>[/b<examples>] with op one of
//   expect       expectation_1d/2d alone (r for the batch)
//   expect_broad expectation_2d alone on the 2d broad problem
//   expect_bwd   expectation_1d/2d_backward alone (dmu, dsigma and r from a random dr)
//   lib_fwd      continuous_attention_1d/2d
//   lib_bwd      continuous_attention_1d/2d_backward alone (random dcontext)
//   lib_fwdbwd   both
//   naive_expect_M<M>, naive_fwd_M<M>   the naive r alone and the naive full forward.
// A trailing /b<k> means the benchmark ran on k of the 64 examples (evenly strided) to keep
// the run short; its time is per call on those k examples (bench/run_continuous.py scales it
// by 64/k). --slow_repetitions=K sets K repetitions for those subset benchmarks.
//
// --accuracy (handled before benchmark::Initialize) times nothing: it prints, as one JSON
// object, the error of the library's float32 forward and of each naive variant against the
// library's double-precision computation (expectation in double, context in double with the
// double ridge matrix and the float values widened): max over the batch of
// max_f |c - c_ref| / max_f |c_ref| (context) and max_j |r - r_ref| / max_j |r_ref|
// (expectations); the naive variants run on the whole batch here.
//
// Timing is wall-clock (UseRealTime). bench/run_continuous.py runs both modes and writes the
// tables.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "continuous/value_kernels.h"
#include "sparcon/attention.h"
#include "sparcon/basis.h"
#include "sparcon/continuous.h"
#include "sparcon/discrete.h"
#include "split_rows.h"

namespace {

constexpr std::size_t kBatch = 64, kLength = 512, kFeatures = 256, kBasis1D = 128;
constexpr std::size_t kSide = 14;
constexpr float kLambda = 0.01F;
constexpr float kAlphas[] = {1.0F, 2.0F, 1.5F};
constexpr unsigned kThreads[] = {1, 2};
constexpr std::size_t kGrid1D[] = {16, 64, 256, 1024, 4096};
constexpr std::size_t kGrid2D[] = {32, 64, 128, 256};
constexpr double kPi = std::numbers::pi;

std::string alpha_name(float alpha) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "a%g", static_cast<double>(alpha));
  return buf;
}

// ---- the naive computation ---------------------------------------------------------------

struct NaiveBasis1D {
  std::vector<double> center, half_precision, norm;  // psi = norm exp(-half_precision (t-c)^2)
  explicit NaiveBasis1D(const sparcon::GaussianBasis1D<float>& b) {
    for (std::size_t j = 0; j < b.size(); ++j) {
      const double w = b.widths[j];
      center.push_back(b.centers[j]);
      half_precision.push_back(0.5 / w);
      norm.push_back(1 / std::sqrt(2 * kPi * w));
    }
  }
};

// r (N) of one 1D density by the M-cell midpoint rule over its support.
void naive_expectation_1d(double alpha, double mu, double sigma2, const NaiveBasis1D& basis,
                          std::size_t m, double* r) {
  const std::size_t n = basis.center.size();
  double lo, width, tau = 0, scale = 0;
  if (alpha == 1) {
    const double sd = std::sqrt(sigma2);
    lo = mu - 8 * sd;
    width = 16 * sd;
    scale = 1 / std::sqrt(2 * kPi * sigma2);
  } else {
    const sparcon::Density1D<double> d(alpha, mu, sigma2);
    lo = mu - d.half_width();
    width = 2 * d.half_width();
    tau = d.tau();
  }
  const double h = width / static_cast<double>(m), power = alpha == 1 ? 0 : 1 / (alpha - 1);
  std::fill(r, r + n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const double t = lo + (static_cast<double>(i) + 0.5) * h, u = t - mu;
    const double f = -u * u / (2 * sigma2);
    double p;
    if (alpha == 1) p = scale * std::exp(f);
    else if (alpha == 2) p = std::max(f - tau, 0.0);
    else p = f > tau ? std::pow((alpha - 1) * (f - tau), power) : 0.0;
    if (p == 0) continue;
    const double w = p * h;
    for (std::size_t j = 0; j < n; ++j) {
      const double dt = t - basis.center[j];
      r[j] += w * basis.norm[j] * std::exp(-basis.half_precision[j] * dt * dt);
    }
  }
}

struct NaiveBasis2D {
  // psi = norm exp(-(a (x-c0)^2 + 2 b (x-c0)(y-c1) + c (y-c1)^2) / 2), (a b; b c) = S^-1
  std::vector<double> c0, c1, a, b, c, norm;
  explicit NaiveBasis2D(const sparcon::GaussianBasis2D<float>& basis) {
    for (std::size_t j = 0; j < basis.size(); ++j) {
      const double s00 = basis.widths[4 * j], s01 = 0.5 * (basis.widths[4 * j + 1] + basis.widths[4 * j + 2]),
                   s11 = basis.widths[4 * j + 3], det = s00 * s11 - s01 * s01;
      c0.push_back(basis.centers[2 * j]);
      c1.push_back(basis.centers[2 * j + 1]);
      a.push_back(s11 / det);
      b.push_back(-s01 / det);
      c.push_back(s00 / det);
      norm.push_back(1 / (2 * kPi * std::sqrt(det)));
    }
  }
};

// r (N) of one 2D density by the M x M midpoint rule over the bounding box of its support.
void naive_expectation_2d(double alpha, const float* mu, const float* sigma,
                          const NaiveBasis2D& basis, std::size_t m, double* r) {
  const std::size_t n = basis.c0.size();
  const double m0 = mu[0], m1 = mu[1];
  const double s00 = sigma[0], s01 = 0.5 * (static_cast<double>(sigma[1]) + sigma[2]), s11 = sigma[3];
  const double det = s00 * s11 - s01 * s01;
  const double i00 = s11 / det, i01 = -s01 / det, i11 = s00 / det;  // Sigma^-1, once
  double e0, e1, tau = 0, scale = 0;
  if (alpha == 1) {
    e0 = 8 * std::sqrt(s00);
    e1 = 8 * std::sqrt(s11);
    scale = 1 / (2 * kPi * std::sqrt(det));
  } else {
    const sparcon::Density2D<double> d(alpha, {m0, m1}, {s00, s01, s01, s11});
    e0 = std::sqrt(d.support_radius2() * s00);
    e1 = std::sqrt(d.support_radius2() * s11);
    tau = d.tau();
  }
  const double h0 = 2 * e0 / static_cast<double>(m), h1 = 2 * e1 / static_cast<double>(m);
  const double cell = h0 * h1, power = alpha == 1 ? 0 : 1 / (alpha - 1);
  std::fill(r, r + n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const double x = m0 - e0 + (static_cast<double>(i) + 0.5) * h0, u0 = x - m0;
    for (std::size_t k = 0; k < m; ++k) {
      const double y = m1 - e1 + (static_cast<double>(k) + 0.5) * h1, u1 = y - m1;
      const double f = -0.5 * (i00 * u0 * u0 + 2 * i01 * u0 * u1 + i11 * u1 * u1);
      double p;
      if (alpha == 1) p = scale * std::exp(f);
      else if (alpha == 2) p = std::max(f - tau, 0.0);
      else p = f > tau ? std::pow((alpha - 1) * (f - tau), power) : 0.0;
      if (p == 0) continue;
      const double w = p * cell;
      for (std::size_t j = 0; j < n; ++j) {
        const double d0 = x - basis.c0[j], d1 = y - basis.c1[j];
        const double q = basis.a[j] * d0 * d0 + 2 * basis.b[j] * d0 * d1 + basis.c[j] * d1 * d1;
        r[j] += w * basis.norm[j] * std::exp(-0.5 * q);
      }
    }
  }
}

// context (E) = H^T (G r): G (L x N), H (L x E) of one example; w (L), sum (E) scratch.
void naive_context(const std::vector<float>& g, std::size_t length, std::size_t n, const float* r,
                   const float* h, std::size_t e, double* w, double* sum, float* out) {
  for (std::size_t l = 0; l < length; ++l) {
    double acc = 0;
    for (std::size_t j = 0; j < n; ++j) acc += static_cast<double>(g[l * n + j]) * static_cast<double>(r[j]);
    w[l] = acc;
  }
  std::fill(sum, sum + e, 0.0);
  for (std::size_t l = 0; l < length; ++l)
    for (std::size_t f = 0; f < e; ++f) sum[f] += w[l] * static_cast<double>(h[l * e + f]);
  for (std::size_t f = 0; f < e; ++f) out[f] = static_cast<float>(sum[f]);
}

using sparcon_bench::split_rows;

// ---- data --------------------------------------------------------------------------------

// One dimension's problem: values, the raw density draws and, per alpha, the scales.
// Issue 3's problem by default (kLength x kFeatures, kBasis1D functions); issue 15's with
// other sizes.
struct Problem1D {
  std::size_t length, features;
  sparcon::RidgeCache1D<float> ridge;
  NaiveBasis1D naive_basis{ridge.basis()};
  std::vector<float> values, dcontext, dr, mu, variance;
  std::vector<std::int64_t> lengths;
  // outputs
  std::vector<float> context, dvalues, dmu, dsigma2, r;

  explicit Problem1D(std::size_t length_ = kLength, std::size_t features_ = kFeatures, std::size_t basis = kBasis1D)
      : length(length_),
        features(features_),
        ridge(sparcon::GaussianBasis1D<float>::paper(basis), kLambda),
        lengths(kBatch, static_cast<std::int64_t>(length_)) {
    std::mt19937_64 rng(20241201);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::uniform_real_distribution<float> loc(0.1F, 0.9F), sd(0.02F, 0.2F);
    values.resize(kBatch * length * features);
    for (float& v : values) v = normal(rng);
    dcontext.resize(kBatch * features);
    for (float& v : dcontext) v = normal(rng);
    dr.resize(kBatch * basis);
    for (float& v : dr) v = normal(rng);
    for (std::size_t b = 0; b < kBatch; ++b) {
      mu.push_back(loc(rng));
      const float s = sd(rng);
      variance.push_back(s * s);
    }
    context.assign(kBatch * features, 0.0F);
    dvalues.assign(values.size(), 0.0F);
    dmu.assign(kBatch, 0.0F);
    dsigma2.assign(kBatch, 0.0F);
    r.assign(kBatch * basis, 0.0F);
    ridge.matrix(length);  // warm the cache
  }
  std::vector<float> sigma2(float alpha) const {
    std::vector<float> s(kBatch);
    for (std::size_t b = 0; b < kBatch; ++b)
      s[b] = sparcon::Density1D<float>::with_variance(alpha, mu[b], variance[b]).sigma2();
    return s;
  }
};

struct Problem2D {
  sparcon::RidgeCache2D<float> ridge{sparcon::GaussianBasis2D<float>::paper(), kLambda};
  NaiveBasis2D naive_basis{ridge.basis()};
  std::size_t n = ridge.basis().size(), features;
  std::vector<float> values, dcontext, dr, mu, covariance;
  std::vector<float> context, dvalues, dmu, dsigma, r;

  explicit Problem2D(std::size_t e, float sd_lo = 0.03F, float sd_hi = 0.2F) : features(e) {
    std::mt19937_64 rng(20241202);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::uniform_real_distribution<float> loc(0.2F, 0.8F), sd(sd_lo, sd_hi), angle(0.0F, static_cast<float>(kPi));
    values.resize(kBatch * kSide * kSide * features);
    for (float& v : values) v = normal(rng);
    dcontext.resize(kBatch * features);
    for (float& v : dcontext) v = normal(rng);
    dr.resize(kBatch * n);
    for (float& v : dr) v = normal(rng);
    for (std::size_t b = 0; b < kBatch; ++b) {
      mu.push_back(loc(rng));
      mu.push_back(loc(rng));
      const double s1 = sd(rng), s2 = sd(rng), v = angle(rng);
      const double c = std::cos(v), s = std::sin(v);
      const double c00 = c * c * s1 * s1 + s * s * s2 * s2, c11 = s * s * s1 * s1 + c * c * s2 * s2;
      const double c01 = c * s * (s1 * s1 - s2 * s2);
      const float off = static_cast<float>(c01);
      covariance.insert(covariance.end(), {static_cast<float>(c00), off, off, static_cast<float>(c11)});
    }
    context.assign(kBatch * features, 0.0F);
    dvalues.assign(values.size(), 0.0F);
    dmu.assign(2 * kBatch, 0.0F);
    dsigma.assign(4 * kBatch, 0.0F);
    r.assign(kBatch * n, 0.0F);
    ridge.matrix({kSide, kSide});  // warm the cache
  }
  std::vector<float> sigma(float alpha) const {
    std::vector<float> out;
    for (std::size_t b = 0; b < kBatch; ++b) {
      const auto d = sparcon::Density2D<float>::with_covariance(
          alpha, {mu[2 * b], mu[2 * b + 1]},
          {covariance[4 * b], covariance[4 * b + 1], covariance[4 * b + 2], covariance[4 * b + 3]});
      for (float v : d.sigma()) out.push_back(v);
    }
    return out;
  }
};

Problem1D& problem_1d() {
  static Problem1D p;
  return p;
}
Problem2D& problem_2d() {
  static Problem2D p(kFeatures);
  return p;
}
Problem2D& problem_2d_broad() {
  static Problem2D p(1, 0.2F, 0.5F);
  return p;
}

// The examples a naive benchmark runs on: all 64, or `count` evenly strided.
std::vector<std::size_t> examples(std::size_t count) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < count; ++k) out.push_back(k * kBatch / count);
  return out;
}

// Naive forward (or r alone when `context` is false) of the listed 1D examples; r_out
// (examples x N, double) and ctx_out (examples x E) receive the results.
void naive_1d(Problem1D& p, float alpha, const std::vector<float>& sigma2, std::size_t m,
              const std::vector<std::size_t>& which, bool context, unsigned threads,
              std::vector<float>& r_out, std::vector<float>& ctx_out) {
  const std::size_t n = kBasis1D;
  const std::vector<float>& g = p.ridge.matrix(kLength);
  r_out.resize(which.size() * n);
  ctx_out.resize(which.size() * kFeatures);
  split_rows(which.size(), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> w(kLength), sum(kFeatures), rd(n);
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t b = which[k];
      float* r = r_out.data() + k * n;
      naive_expectation_1d(alpha, p.mu[b], sigma2[b], p.naive_basis, m, rd.data());
      for (std::size_t j = 0; j < n; ++j) r[j] = static_cast<float>(rd[j]);
      if (context)
        naive_context(g, kLength, n, r, p.values.data() + b * kLength * kFeatures, kFeatures,
                      w.data(), sum.data(), ctx_out.data() + k * kFeatures);
    }
  });
}

void naive_2d(Problem2D& p, float alpha, const std::vector<float>& sigma, std::size_t m,
              const std::vector<std::size_t>& which, bool context, unsigned threads,
              std::vector<float>& r_out, std::vector<float>& ctx_out) {
  const std::size_t n = p.n, pixels = kSide * kSide;
  const std::vector<float>& g = p.ridge.matrix({kSide, kSide});
  r_out.resize(which.size() * n);
  ctx_out.resize(which.size() * kFeatures);
  split_rows(which.size(), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> w(pixels), sum(kFeatures), rd(n);
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t b = which[k];
      float* r = r_out.data() + k * n;
      naive_expectation_2d(alpha, p.mu.data() + 2 * b, sigma.data() + 4 * b, p.naive_basis, m, rd.data());
      for (std::size_t j = 0; j < n; ++j) r[j] = static_cast<float>(rd[j]);
      if (context)
        naive_context(g, pixels, n, r, p.values.data() + b * pixels * kFeatures, kFeatures,
                      w.data(), sum.data(), ctx_out.data() + k * kFeatures);
    }
  });
}

// Examples a naive benchmark of M cells per dimension uses: the whole batch up to about 3e7
// basis evaluations per call, 16 examples beyond (1D M = 4096: 8e6 evaluations; 2D M = 128:
// 3e7, M = 256: 1e8, about 0.5 s a call on one thread).
std::size_t naive_examples(int dim, std::size_t m) {
  if (dim == 1) return m >= 4096 ? 16 : kBatch;
  return m >= 128 ? 16 : kBatch;
}

// ---- benchmarks --------------------------------------------------------------------------

int slow_repetitions = 0;

template <class Fn>
void reg(const std::string& name, Fn fn, bool slow = false) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& state) {
              for (auto _ : state) {
                fn();
                benchmark::ClobberMemory();
              }
            })
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
  if (slow && slow_repetitions > 0) b->Repetitions(slow_repetitions);
}

void register_all() {
  for (float alpha : kAlphas) {
    for (unsigned t : kThreads) {
      const sparcon::Threads th{t};
      // ---- 1D ----
      {
        Problem1D& p = problem_1d();
        auto s2 = std::make_shared<std::vector<float>>(p.sigma2(alpha));
        const std::string suffix = "/1d/" + alpha_name(alpha) + "/t" + std::to_string(t);
        const sparcon::SequenceShape shape{kBatch, kLength, kFeatures};
        Problem1D* pp = &p;
        reg("expect" + suffix, [pp, s2, alpha, th] {
          sparcon::expectation_1d<float>(alpha, pp->mu, *s2, pp->ridge.basis(), pp->r, th);
          benchmark::DoNotOptimize(pp->r.data());
        });
        reg("expect_bwd" + suffix, [pp, s2, alpha, th] {
          sparcon::expectation_1d_backward<float>(alpha, pp->mu, *s2, pp->ridge.basis(), pp->dr,
                                                  pp->dmu, pp->dsigma2, pp->r, th);
          benchmark::DoNotOptimize(pp->dmu.data());
        });
        auto fwd = [pp, s2, alpha, th, shape] {
          sparcon::continuous_attention_1d<float>(alpha, pp->ridge, pp->values, shape, pp->lengths,
                                                  pp->mu, *s2, pp->context, th);
          benchmark::DoNotOptimize(pp->context.data());
        };
        auto bwd = [pp, s2, alpha, th, shape] {
          sparcon::continuous_attention_1d_backward<float>(alpha, pp->ridge, pp->values, shape,
                                                           pp->lengths, pp->mu, *s2, pp->dcontext,
                                                           pp->dvalues, pp->dmu, pp->dsigma2, th);
          benchmark::DoNotOptimize(pp->dvalues.data());
        };
        reg("lib_fwd" + suffix, fwd);
        reg("lib_bwd" + suffix, bwd);
        reg("lib_fwdbwd" + suffix, [fwd, bwd] { fwd(); bwd(); });
        for (std::size_t m : kGrid1D) {
          const std::size_t count = naive_examples(1, m);
          auto which = std::make_shared<std::vector<std::size_t>>(examples(count));
          const std::string sub = count == kBatch ? "" : "/b" + std::to_string(count);
          for (bool context : {false, true}) {
            reg(std::string(context ? "naive_fwd_M" : "naive_expect_M") + std::to_string(m) + suffix + sub,
                [pp, s2, alpha, t, m, which, context] {
                  static thread_local std::vector<float> r;
                  static thread_local std::vector<float> c;
                  naive_1d(*pp, alpha, *s2, m, *which, context, t, r, c);
                  benchmark::DoNotOptimize(r.data());
                  benchmark::DoNotOptimize(c.data());
                },
                count != kBatch);
          }
        }
      }
      // ---- 2D ----
      {
        Problem2D& p = problem_2d();
        auto sg = std::make_shared<std::vector<float>>(p.sigma(alpha));
        const std::string suffix = "/2d/" + alpha_name(alpha) + "/t" + std::to_string(t);
        const sparcon::ImageShape shape{kBatch, kSide, kSide, kFeatures};
        Problem2D* pp = &p;
        reg("expect" + suffix, [pp, sg, alpha, th] {
          sparcon::expectation_2d<float>(alpha, pp->mu, *sg, pp->ridge.basis(), pp->r, th);
          benchmark::DoNotOptimize(pp->r.data());
        });
        Problem2D* broad = &problem_2d_broad();
        auto broad_sigma = std::make_shared<std::vector<float>>(broad->sigma(alpha));
        reg("expect_broad" + suffix, [broad, broad_sigma, alpha, th] {
          sparcon::expectation_2d<float>(alpha, broad->mu, *broad_sigma, broad->ridge.basis(), broad->r, th);
          benchmark::DoNotOptimize(broad->r.data());
        });
        reg("expect_bwd" + suffix, [pp, sg, alpha, th] {
          sparcon::expectation_2d_backward<float>(alpha, pp->mu, *sg, pp->ridge.basis(), pp->dr,
                                                  pp->dmu, pp->dsigma, pp->r, th);
          benchmark::DoNotOptimize(pp->dmu.data());
        });
        auto fwd = [pp, sg, alpha, th, shape] {
          sparcon::continuous_attention_2d<float>(alpha, pp->ridge, pp->values, shape, pp->mu, *sg,
                                                  pp->context, th);
          benchmark::DoNotOptimize(pp->context.data());
        };
        auto bwd = [pp, sg, alpha, th, shape] {
          sparcon::continuous_attention_2d_backward<float>(alpha, pp->ridge, pp->values, shape,
                                                           pp->mu, *sg, pp->dcontext, pp->dvalues,
                                                           pp->dmu, pp->dsigma, th);
          benchmark::DoNotOptimize(pp->dvalues.data());
        };
        reg("lib_fwd" + suffix, fwd);
        reg("lib_bwd" + suffix, bwd);
        reg("lib_fwdbwd" + suffix, [fwd, bwd] { fwd(); bwd(); });
        for (std::size_t m : kGrid2D) {
          const std::size_t count = naive_examples(2, m);
          auto which = std::make_shared<std::vector<std::size_t>>(examples(count));
          const std::string sub = count == kBatch ? "" : "/b" + std::to_string(count);
          for (bool context : {false, true}) {
            reg(std::string(context ? "naive_fwd_M" : "naive_expect_M") + std::to_string(m) + suffix + sub,
                [pp, sg, alpha, t, m, which, context] {
                  static thread_local std::vector<float> r;
                  static thread_local std::vector<float> c;
                  naive_2d(*pp, alpha, *sg, m, *which, context, t, r, c);
                  benchmark::DoNotOptimize(r.data());
                  benchmark::DoNotOptimize(c.data());
                },
                count != kBatch);
          }
        }
      }
    }
  }
}

// ---- issue 15: 2D attention against discrete softmax attention --------------------------
//
// The workload of issue 15: batch 64, values 14 x 14 x 512, the paper's basis (N = 100), lambda
// 0.01, densities drawn as for the 2d problem (Problem2D with E = 512; its own draws). Names
// <op>/img512[/a<alpha>]/t<threads>, op one of
//   copy            memcpy of the values (25.7 MB) into another buffer (t1 only)
//   softmax_fwd     discrete softmax attention over the 196 cells: p = sparcon::softmax of a
//                   fixed random score row per example, context = sum_l p_l h_l
//   softmax_fwdbwd  that and its backward: dp_l = <h_l, dcontext>, dscores =
//                   sparcon::softmax_backward(p, dp), dvalues_l = p_l dcontext
//   expect, expect_bwd, lib_fwd, lib_bwd, lib_fwdbwd   as above, on this workload
// The discrete attention's value side runs on the same Highway kernels as the continuous value
// side (simd::axpy / dot / scale, sums in double), so the two differ by the expectation and by
// G (L x N) alone; scores are given (their computation from queries is outside both).
struct SoftmaxAttention {
  std::vector<float> scores, p, dp, dscores;
  explicit SoftmaxAttention(std::size_t cells) : p(kBatch * cells), dp(kBatch * cells), dscores(kBatch * cells) {
    std::mt19937_64 rng(15);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    for (std::size_t i = 0; i < kBatch * cells; ++i) scores.push_back(normal(rng));
  }
};

Problem2D& problem_2d_wide() {
  static Problem2D p(512);
  return p;
}

// P: Problem1D or Problem2D (values B x cells x E, context, dcontext, dvalues, features).
template <class P>
void softmax_attention_fwd(P& p, SoftmaxAttention& s, std::size_t cells, unsigned threads) {
  const std::size_t e = p.features;
  split_rows(kBatch, threads, [&](std::size_t begin, std::size_t end) {
    const sparcon::Rows rows{end - begin, cells};
    sparcon::softmax<float>(std::span<const float>(s.scores.data() + begin * cells, rows.count * cells),
                            std::span<float>(s.p.data() + begin * cells, rows.count * cells), rows, {1});
    std::vector<double> sum(e);
    for (std::size_t b = begin; b < end; ++b) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t l = 0; l < cells; ++l)
        sparcon::simd::axpy(s.p[b * cells + l], p.values.data() + (b * cells + l) * e, sum.data(), e);
      for (std::size_t f = 0; f < e; ++f) p.context[b * e + f] = static_cast<float>(sum[f]);
    }
  });
}

template <class P>
void softmax_attention_bwd(P& p, SoftmaxAttention& s, std::size_t cells, unsigned threads) {
  const std::size_t e = p.features;
  split_rows(kBatch, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b) {
      const float* dc = p.dcontext.data() + b * e;
      for (std::size_t l = 0; l < cells; ++l)
        s.dp[b * cells + l] = static_cast<float>(sparcon::simd::dot(p.values.data() + (b * cells + l) * e, dc, e));
    }
    const sparcon::Rows rows{end - begin, cells};
    sparcon::softmax_backward<float>(std::span<const float>(s.p.data() + begin * cells, rows.count * cells),
                                     std::span<const float>(s.dp.data() + begin * cells, rows.count * cells),
                                     std::span<float>(s.dscores.data() + begin * cells, rows.count * cells), rows, {1});
    for (std::size_t b = begin; b < end; ++b)
      for (std::size_t l = 0; l < cells; ++l)
        sparcon::simd::scale(s.p[b * cells + l], p.dcontext.data() + b * e,
                             p.dvalues.data() + (b * cells + l) * e, e);
  });
}

// copy/<workload>/t1 and softmax_fwd, softmax_fwdbwd /<workload>/t<threads> for a problem of
// `cells` positions per example.
template <class P>
void register_baselines(const std::string& workload, P* pp, std::size_t cells) {
  auto sa = std::make_shared<SoftmaxAttention>(cells);
  auto copy = std::make_shared<std::vector<float>>(pp->values.size());
  reg("copy/" + workload + "/t1", [pp, copy] {
    std::memcpy(copy->data(), pp->values.data(), pp->values.size() * sizeof(float));
    benchmark::DoNotOptimize(copy->data());
  });
  for (unsigned t : kThreads) {
    const std::string th_name = "/t" + std::to_string(t);
    reg("softmax_fwd/" + workload + th_name, [pp, sa, cells, t] {
      softmax_attention_fwd(*pp, *sa, cells, t);
      benchmark::DoNotOptimize(pp->context.data());
    });
    reg("softmax_fwdbwd/" + workload + th_name, [pp, sa, cells, t] {
      softmax_attention_fwd(*pp, *sa, cells, t);
      softmax_attention_bwd(*pp, *sa, cells, t);
      benchmark::DoNotOptimize(pp->dvalues.data());
    });
  }
}

void register_issue15() {
  Problem2D* pp = &problem_2d_wide();
  register_baselines("img512", pp, kSide * kSide);
  const sparcon::ImageShape shape{kBatch, kSide, kSide, pp->features};
  for (unsigned t : kThreads) {
    const std::string th_name = "/t" + std::to_string(t);
    for (float alpha : kAlphas) {
      const sparcon::Threads th{t};
      auto sg = std::make_shared<std::vector<float>>(pp->sigma(alpha));
      const std::string suffix = "/img512/" + alpha_name(alpha) + th_name;
      reg("expect" + suffix, [pp, sg, alpha, th] {
        sparcon::expectation_2d<float>(alpha, pp->mu, *sg, pp->ridge.basis(), pp->r, th);
        benchmark::DoNotOptimize(pp->r.data());
      });
      reg("expect_bwd" + suffix, [pp, sg, alpha, th] {
        sparcon::expectation_2d_backward<float>(alpha, pp->mu, *sg, pp->ridge.basis(), pp->dr, pp->dmu,
                                                pp->dsigma, pp->r, th);
        benchmark::DoNotOptimize(pp->dmu.data());
      });
      auto fwd = [pp, sg, alpha, th, shape] {
        sparcon::continuous_attention_2d<float>(alpha, pp->ridge, pp->values, shape, pp->mu, *sg, pp->context, th);
        benchmark::DoNotOptimize(pp->context.data());
      };
      auto bwd = [pp, sg, alpha, th, shape] {
        sparcon::continuous_attention_2d_backward<float>(alpha, pp->ridge, pp->values, shape, pp->mu, *sg,
                                                         pp->dcontext, pp->dvalues, pp->dmu, pp->dsigma, th);
        benchmark::DoNotOptimize(pp->dvalues.data());
      };
      reg("lib_fwd" + suffix, fwd);
      reg("lib_bwd" + suffix, bwd);
      reg("lib_fwdbwd" + suffix, [fwd, bwd] { fwd(); bwd(); });
    }
  }
}

// The same for 1D, issue 15's workload: batch 64, 160 tokens of 512 features, 64 basis
// functions (the paper's 1D basis of that size), lambda 0.01; densities as for the 1d problem.
// Names <op>/seq160[/a<alpha>]/t<threads>, the ops as for img512.
constexpr std::size_t kTokens15 = 160, kFeatures15 = 512, kBasis15 = 64;

void register_issue15_1d() {
  static Problem1D problem(kTokens15, kFeatures15, kBasis15);
  Problem1D* pp = &problem;
  register_baselines("seq160", pp, kTokens15);
  const sparcon::SequenceShape shape{kBatch, kTokens15, kFeatures15};
  for (unsigned t : kThreads) {
    const std::string th_name = "/t" + std::to_string(t);
    for (float alpha : kAlphas) {
      const sparcon::Threads th{t};
      auto s2 = std::make_shared<std::vector<float>>(pp->sigma2(alpha));
      const std::string suffix = "/seq160/" + alpha_name(alpha) + th_name;
      reg("expect" + suffix, [pp, s2, alpha, th] {
        sparcon::expectation_1d<float>(alpha, pp->mu, *s2, pp->ridge.basis(), pp->r, th);
        benchmark::DoNotOptimize(pp->r.data());
      });
      auto fwd = [pp, s2, alpha, th, shape] {
        sparcon::continuous_attention_1d<float>(alpha, pp->ridge, pp->values, shape, pp->lengths, pp->mu, *s2,
                                                pp->context, th);
        benchmark::DoNotOptimize(pp->context.data());
      };
      auto bwd = [pp, s2, alpha, th, shape] {
        sparcon::continuous_attention_1d_backward<float>(alpha, pp->ridge, pp->values, shape, pp->lengths, pp->mu,
                                                         *s2, pp->dcontext, pp->dvalues, pp->dmu, pp->dsigma2, th);
        benchmark::DoNotOptimize(pp->dvalues.data());
      };
      reg("lib_fwd" + suffix, fwd);
      reg("lib_bwd" + suffix, bwd);
      reg("lib_fwdbwd" + suffix, [fwd, bwd] { fwd(); bwd(); });
    }
  }
}

// ---- accuracy ----------------------------------------------------------------------------

// max over rows of max_i |x - ref| / max_i |ref|, rows of `width` entries.
template <class X>
double row_error(const std::vector<X>& x, const std::vector<double>& ref, std::size_t width) {
  double worst = 0;
  for (std::size_t row = 0; row * width < ref.size(); ++row) {
    double scale = 0, err = 0;
    for (std::size_t i = 0; i < width; ++i) {
      scale = std::max(scale, std::abs(ref[row * width + i]));
      err = std::max(err, std::abs(static_cast<double>(x[row * width + i]) - ref[row * width + i]));
    }
    worst = std::max(worst, err / scale);
  }
  return worst;
}

template <class X>
std::vector<double> widen(const std::vector<X>& x) {
  return std::vector<double>(x.begin(), x.end());
}

int accuracy() {
  std::printf("{\"accuracy\": [\n");
  bool first = true;
  auto emit = [&](const char* dim, float alpha, const char* method, std::size_t m, double ctx, double r) {
    std::printf("%s  {\"dim\": \"%s\", \"alpha\": %g, \"method\": \"%s\", \"M\": %zu, "
                "\"context_error\": %.3e, \"r_error\": %.3e}",
                first ? "" : ",\n", dim, static_cast<double>(alpha), method, m, ctx, r);
    first = false;
    std::fflush(stdout);
  };
  const std::vector<std::size_t> all = examples(kBatch);
  {
    Problem1D& p = problem_1d();
    sparcon::RidgeCache1D<double> ridge(sparcon::GaussianBasis1D<double>::paper(kBasis1D), kLambda);
    const std::vector<double> values = widen(p.values), mu = widen(p.mu);
    const sparcon::SequenceShape shape{kBatch, kLength, kFeatures};
    for (float alpha : kAlphas) {
      const std::vector<float> s2 = p.sigma2(alpha);
      const std::vector<double> s2d = widen(s2);
      std::vector<double> r_ref(kBatch * kBasis1D), c_ref(kBatch * kFeatures);
      sparcon::expectation_1d<double>(alpha, mu, s2d, ridge.basis(), r_ref, {2});
      sparcon::continuous_attention_1d<double>(alpha, ridge, values, shape, p.lengths, mu, s2d, c_ref, {2});
      std::vector<float> r(kBatch * kBasis1D), c(kBatch * kFeatures);
      sparcon::expectation_1d<float>(alpha, p.mu, s2, p.ridge.basis(), r, {2});
      sparcon::continuous_attention_1d<float>(alpha, p.ridge, p.values, shape, p.lengths, p.mu, s2, c, {2});
      emit("1d", alpha, "library", 0, row_error(c, c_ref, kFeatures), row_error(r, r_ref, kBasis1D));
      for (std::size_t m : kGrid1D) {
        std::vector<float> rn, cn;
        naive_1d(p, alpha, s2, m, all, true, 2, rn, cn);
        emit("1d", alpha, "naive", m, row_error(cn, c_ref, kFeatures), row_error(rn, r_ref, kBasis1D));
      }
    }
  }
  {
    Problem2D& p = problem_2d();
    sparcon::RidgeCache2D<double> ridge(sparcon::GaussianBasis2D<double>::paper(), kLambda);
    const std::vector<double> values = widen(p.values), mu = widen(p.mu);
    const sparcon::ImageShape shape{kBatch, kSide, kSide, kFeatures};
    for (float alpha : kAlphas) {
      const std::vector<float> sg = p.sigma(alpha);
      const std::vector<double> sgd = widen(sg);
      std::vector<double> r_ref(kBatch * p.n), c_ref(kBatch * kFeatures);
      sparcon::expectation_2d<double>(alpha, mu, sgd, ridge.basis(), r_ref, {2});
      sparcon::continuous_attention_2d<double>(alpha, ridge, values, shape, mu, sgd, c_ref, {2});
      std::vector<float> r(kBatch * p.n), c(kBatch * kFeatures);
      sparcon::expectation_2d<float>(alpha, p.mu, sg, p.ridge.basis(), r, {2});
      sparcon::continuous_attention_2d<float>(alpha, p.ridge, p.values, shape, p.mu, sg, c, {2});
      emit("2d", alpha, "library", 0, row_error(c, c_ref, kFeatures), row_error(r, r_ref, p.n));
      for (std::size_t m : kGrid2D) {
        std::vector<float> rn, cn;
        naive_2d(p, alpha, sg, m, all, true, 2, rn, cn);
        emit("2d", alpha, "naive", m, row_error(cn, c_ref, kFeatures), row_error(rn, r_ref, p.n));
      }
    }
  }
  std::printf("\n]}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--accuracy") == 0) return accuracy();
  // --slow_repetitions=K: repetitions of the benchmarks that run on a subset of the batch.
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--slow_repetitions=", 19) == 0) {
      slow_repetitions = std::atoi(argv[i] + 19);
      std::copy(argv + i + 1, argv + argc, argv + i);
      --argc;
      --i;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  register_issue15();
  register_issue15_1d();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
