// The LibTorch layer from C++: ops equal the core bit for bit, the torch::nn modules have the
// right shapes, honour masks and lengths, and train; and the generic kernel of the 2D
// expectation with alpha > 1 against a direct quadrature, the core and central differences.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "sparcon/attention.h"
#include "sparcon/discrete.h"
#include "sparcon/torch/modules.h"
#include "sparcon/torch/ops.h"
#include "test_support.h"

namespace {

namespace st = sparcon::torch;

// The core's kernel bit for bit; under SPARCON_BACKEND=generic the ATen kernel, which sums in
// another order, within a few float ulp of it.
TEST(TorchOps, SparsemaxEqualsTheCoreBitForBit) {
  torch::manual_seed(0);
  const at::Tensor x = torch::randn({7, 33});
  std::vector<float> p(static_cast<std::size_t>(x.numel()));
  sparcon::sparsemax<float>(std::span<const float>(x.data_ptr<float>(), p.size()), p, {7, 33});
  const at::Tensor got = st::sparsemax(x, -1).contiguous();
  const char* backend = std::getenv("SPARCON_BACKEND");
  const bool generic = backend != nullptr && std::string(backend) == "generic";
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (generic)
      ASSERT_NEAR(got.data_ptr<float>()[i], p[i], 4e-7) << i;
    else
      ASSERT_EQ(got.data_ptr<float>()[i], p[i]) << i;
  }
}

TEST(TorchOps, AnyDimAndNonContiguousInput) {
  torch::manual_seed(1);
  const at::Tensor x = torch::randn({4, 5, 6}, torch::kDouble).transpose(0, 2);  // (6, 5, 4), strided
  const at::Tensor p = st::entmax15(x, 1);
  EXPECT_TRUE(torch::allclose(p.sum(1), torch::ones({6, 4}, torch::kDouble), 1e-12, 1e-12));
  const at::Tensor q = st::entmax15(x.movedim(1, -1).contiguous(), -1).movedim(-1, 1);
  EXPECT_TRUE(torch::equal(p, q));
}

TEST(TorchOps, BadArgumentsNameThemselves) {
  const at::Tensor x = torch::randn({2, 3});
  EXPECT_TRUE(sparcon_test::throws_naming<c10::ValueError>([&] { st::entmax(x, -1.0, -1); }, {"alpha"}));
  EXPECT_THROW(st::sparsemax(x, 5), c10::ValueError);
}

TEST(TorchModules, EntmaxIsSparseAndNormalised) {
  st::Entmax map(st::EntmaxOptions(2.0));
  const at::Tensor p = map(torch::tensor({{3.0f, 1.0f, -2.0f, 0.5f}}));
  EXPECT_NEAR(p.sum().item<float>(), 1.0f, 1e-6f);
  EXPECT_EQ(p[0][2].item<float>(), 0.0f);
}

TEST(TorchModules, EntmaxAttentionShapesAndKeyMask) {
  torch::manual_seed(2);
  st::EntmaxAttention attention(st::EntmaxAttentionOptions(8, 2).alpha(1.5));
  const at::Tensor q = torch::randn({3, 4, 8}), k = torch::randn({3, 6, 8});
  at::Tensor mask = torch::zeros({3, 6}, torch::kBool);
  mask.index_put_({torch::indexing::Slice(), torch::indexing::Slice(4, 6)}, true);
  const auto [out, weights] = attention(q, k, k, mask);
  EXPECT_EQ(out.sizes(), at::IntArrayRef({3, 4, 8}));
  EXPECT_EQ(weights.sizes(), at::IntArrayRef({3, 2, 4, 6}));
  EXPECT_EQ(weights.index({torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(),
                           torch::indexing::Slice(4, 6)}).abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({3, 2, 4}), 1e-5, 1e-5));
}

// A tiny regression task: the target is the mean of the values over the positions near 0.3
// (1D) or (0.3, 0.7) (2D). Channel 0 flags those positions, so that a discrete attention (which
// sees only the values) can find them too; the "cont" head learns the fixed place.
at::Tensor flag_relevant(at::Tensor values, bool two) {
  values.select(-1, 0).zero_();
  if (two)
    values.slice(1, 1, 3).slice(2, 4, 6).select(-1, 0).fill_(1.0);
  else
    values.slice(1, 3, 6).select(-1, 0).fill_(1.0);
  return values;
}

at::Tensor target_of(const at::Tensor& values, bool two) {
  if (!two) return values.slice(1, 3, 6).mean(1);
  return values.slice(1, 1, 3).slice(2, 4, 6).mean({1, 2});
}

void trains(const std::string& mode, int dims, double alpha) {
  torch::manual_seed(3);
  st::ContinuousAttention attention(
      st::ContinuousAttentionOptions(4, dims).alpha(alpha).mode(mode).basis_size(16).grid_side(4).variance(0.02));
  torch::optim::Adam optimiser(attention->parameters(), torch::optim::AdamOptions(0.05));
  const bool two = dims == 2;
  const at::Tensor values = flag_relevant(two ? torch::randn({16, 6, 6, 4}) : torch::randn({16, 12, 4}), two);
  const at::Tensor target = target_of(values, two);
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    optimiser.zero_grad();
    const at::Tensor context = attention(values);
    ASSERT_EQ(context.sizes(), at::IntArrayRef({16, 4}));
    const at::Tensor loss = (context - target).pow(2).mean();
    loss.backward();
    optimiser.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT_LT(last, 0.7 * first) << mode << " " << dims << "D alpha " << alpha;
}

TEST(TorchModules, ContinuousAttentionTrains1D) {
  trains("cont", 1, 1.0);
  trains("cont", 1, 2.0);
  trains("disc+cont", 1, 2.0);
}

TEST(TorchModules, ContinuousAttentionTrains2D) {
  trains("cont", 2, 1.0);
  trains("cont", 2, 2.0);
  trains("disc+cont", 2, 1.0);
}

// With the head's weights zeroed only its bias acts: mu = 1/2 and the scale as asked
// (1D sigma^2 = s; 2D Sigma = s I + min_scale I).
TEST(TorchModules, ContinuousAttentionStartsAtInitialScale) {
  for (const double scale : {0.05, 5e-4, 30.0}) {
    for (const int dims : {1, 2}) {
      st::ContinuousAttention attention(st::ContinuousAttentionOptions(4, dims).initial_scale(scale));
      attention->to(torch::kDouble);
      {
        const torch::NoGradGuard no_grad;
        attention->head->weight.zero_();
      }
      attention(dims == 1 ? torch::randn({2, 6, 4}, torch::kDouble) : torch::randn({2, 3, 3, 4}, torch::kDouble));
      const auto [mu, sigma] = attention->last_density();
      EXPECT_TRUE(torch::allclose(mu, torch::full_like(mu, 0.5), 0, 1e-15));
      const at::Tensor want = dims == 1 ? torch::full_like(sigma, scale)
                                        : ((scale + 1e-6) * torch::eye(2, torch::kDouble)).expand({2, 2, 2});
      // The bias is stored in float.
      EXPECT_TRUE(torch::allclose(sigma, want, 1e-6, 0)) << dims << "D scale " << scale << ": " << sigma;
    }
  }
  EXPECT_THROW(st::ContinuousAttention(st::ContinuousAttentionOptions(4, 1).initial_scale(0)), c10::ValueError);
}

TEST(TorchModules, ContinuousAttentionIgnoresPadding) {
  torch::manual_seed(4);
  st::ContinuousAttention attention(st::ContinuousAttentionOptions(3, 1).alpha(2.0).mode("disc+cont").basis_size(8));
  at::Tensor values = torch::randn({2, 9, 3});
  const at::Tensor lengths = torch::tensor({9, 5}, torch::kLong);
  const at::Tensor a = attention(values, lengths);
  values.index_put_({1, torch::indexing::Slice(5, 9)}, 100.0);
  const at::Tensor b = attention(values, lengths);
  EXPECT_TRUE(torch::equal(a[1], b[1]));
}

// ---- the generic 2D expectation, alpha > 1 -------------------------------------------------------

// Sets SPARCON_BACKEND for its lifetime (and restores what was there).
class BackendScope {
 public:
  explicit BackendScope(const char* value) {
    if (const char* old = std::getenv("SPARCON_BACKEND")) previous_ = old;
    setenv("SPARCON_BACKEND", value, 1);
  }
  ~BackendScope() {
    if (previous_)
      setenv("SPARCON_BACKEND", previous_->c_str(), 1);
    else
      unsetenv("SPARCON_BACKEND");
  }
  BackendScope(const BackendScope&) = delete;
  BackendScope& operator=(const BackendScope&) = delete;

 private:
  std::optional<std::string> previous_;
};

// Gauss-Legendre nodes and weights on [-1, 1] (Golub-Welsch: the eigenvalues of the Jacobi matrix
// of the Legendre polynomials and twice the squared first components of its eigenvectors).
std::pair<std::vector<double>, std::vector<double>> legendre_rule(int n) {
  const at::Tensor i = torch::arange(1, n, torch::kDouble);
  const at::Tensor off = i / torch::sqrt(4 * i * i - 1);
  const auto [x, v] = torch::linalg_eigh(torch::diag(off, 1) + torch::diag(off, -1));
  const at::Tensor w = 2 * v[0].square();
  return {std::vector<double>(x.data_ptr<double>(), x.data_ptr<double>() + n),
          std::vector<double>(w.data_ptr<double>(), w.data_ptr<double>() + n)};
}

// r_bj = E_p[N(t; c_j, S_j)] by a direct quadrature that shares nothing with the library: -tau
// from the normalisation (2 pi sqrt(det Sigma) (alpha-1)^k T^(k+1) / (k+1) = 1, T = -tau,
// k = 1/(alpha-1)), p = ((alpha-1)(T - rho^2/2))^k in whitened polar coordinates
// t = mu + Sigma^(1/2) rho (cos v, sin v), rho = sqrt(2T) sin(phi) (which makes the profile
// cos(phi)^(2k) and removes the edge), 24 x 16-point Gauss-Legendre panels in phi and 256
// equally spaced angles (both converged to rounding for these basis functions, of variance 0.01).
at::Tensor direct_expectation_2d(double alpha, const at::Tensor& mu, const at::Tensor& sigma, const at::Tensor& centers,
                                 const at::Tensor& widths) {
  const double k = 1 / (alpha - 1), pi = std::numbers::pi;
  const auto [x, w] = legendre_rule(16);
  constexpr int kPanelCount = 24, kAngles = 256;
  const std::int64_t B = mu.size(0), N = centers.size(0);
  at::Tensor r = torch::zeros({B, N}, torch::kDouble);
  for (std::int64_t b = 0; b < B; ++b) {
    const double s00 = sigma[b][0][0].item<double>(), s01 = sigma[b][0][1].item<double>(),
                 s11 = sigma[b][1][1].item<double>();
    const double det = s00 * s11 - s01 * s01, root_det = std::sqrt(det), q = 1 / std::sqrt(s00 + s11 + 2 * root_det);
    const double a00 = (s00 + root_det) * q, a01 = s01 * q, a11 = (s11 + root_det) * q;  // Sigma^(1/2)
    const double T = std::pow((k + 1) / (2 * pi * root_det * std::pow(alpha - 1, k)), 1 / (k + 1));
    const double rho_max = std::sqrt(2 * T), front = std::pow((alpha - 1) * T, k);
    const double m0 = mu[b][0].item<double>(), m1 = mu[b][1].item<double>();
    std::vector<double> t0, t1, weight;
    for (int panel = 0; panel < kPanelCount; ++panel)
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double half = 0.25 * pi / kPanelCount, phi = (panel + 0.5) * 2 * half + half * x[i];
        const double rho = rho_max * std::sin(phi);
        // dt = sqrt(det) rho drho dv, drho = rho_max cos(phi) dphi.
        const double radial = half * w[i] * front * std::pow(std::cos(phi), 2 * k) * rho * rho_max * std::cos(phi);
        for (int j = 0; j < kAngles; ++j) {
          const double v = 2 * pi * j / kAngles, u0 = rho * std::cos(v), u1 = rho * std::sin(v);
          t0.push_back(m0 + a00 * u0 + a01 * u1);
          t1.push_back(m1 + a01 * u0 + a11 * u1);
          weight.push_back(radial * root_det * 2 * pi / kAngles);
        }
      }
    const at::Tensor T0 = torch::tensor(t0, torch::kDouble), T1 = torch::tensor(t1, torch::kDouble),
                     W = torch::tensor(weight, torch::kDouble);
    for (std::int64_t j = 0; j < N; ++j) {
      const double c0 = centers[j][0].item<double>(), c1 = centers[j][1].item<double>();
      const double w00 = widths[j][0][0].item<double>(), w01 = widths[j][0][1].item<double>(),
                   w11 = widths[j][1][1].item<double>(), wdet = w00 * w11 - w01 * w01;
      const at::Tensor d0 = T0 - c0, d1 = T1 - c1;
      const at::Tensor quad = (w11 * d0 * d0 - 2 * w01 * d0 * d1 + w00 * d1 * d1) / wdet;
      r[b][j] = (W * torch::exp(-0.5 * quad)).sum() / (2 * pi * std::sqrt(wdet));
    }
  }
  return r;
}

struct Densities2D {
  at::Tensor mu, sigma;
};

// Inside the unit square, anisotropic and rotated, partly outside it, and one far smaller
// than the basis functions (the radial closed form of alpha = 2 cancels there: the rule).
Densities2D test_densities_2d() {
  return {torch::tensor({0.3, 0.6, 0.5, 0.45, 0.95, -0.05, 0.4, 0.7}, torch::kDouble).view({4, 2}),
          torch::tensor({0.02, 0.005, 0.005, 0.01, 0.05, -0.03, -0.03, 0.03, 0.01, 0.0, 0.0, 0.004, 1e-6, 0.0, 0.0, 2e-6},
                        torch::kDouble)
              .view({4, 2, 2})};
}

double max_abs(const at::Tensor& t) { return t.abs().max().item<double>(); }

TEST(GenericExpectation2D, MatchesADirectQuadratureAndTheCore) {
  const auto [centers, widths] = st::basis_2d(3, 0.01);
  const Densities2D d = test_densities_2d();
  for (const double alpha : {1.5, 2.0, 3.0}) {
    const at::Tensor want = direct_expectation_2d(alpha, d.mu, d.sigma, centers, widths);
    at::Tensor core, generic, generic_float;
    {
      const BackendScope scope("core");
      core = st::continuous_expectation(d.mu, d.sigma, centers, widths, alpha);
    }
    {
      const BackendScope scope("generic");
      generic = st::continuous_expectation(d.mu, d.sigma, centers, widths, alpha);
      generic_float = st::continuous_expectation(d.mu.to(torch::kFloat), d.sigma.to(torch::kFloat),
                                                 centers.to(torch::kFloat), widths.to(torch::kFloat), alpha);
    }
    ASSERT_EQ(generic.sizes(), at::IntArrayRef({4, 9}));
    ASSERT_EQ(generic_float.scalar_type(), torch::kFloat);
    // Per density, relative to its largest r (the tiny density sees only the nearest function).
    // Measured: generic and core within 1.4e-15 of the direct quadrature, float within 2.8e-7.
    const at::Tensor scale = want.abs().amax(1, true);
    EXPECT_LT(max_abs((generic - want) / scale), 1e-13) << alpha;
    EXPECT_LT(max_abs((core - want) / scale), 1e-13) << alpha;
    EXPECT_LT(max_abs((generic - core) / scale), 1e-13) << alpha;
    EXPECT_LT(max_abs((generic_float.to(torch::kDouble) - want) / scale), 1e-6) << alpha;
  }
}

TEST(GenericExpectation2D, GradientsAreCentralDifferences) {
  const BackendScope scope("generic");
  const auto [centers, widths] = st::basis_2d(3, 0.01);
  const Densities2D d = test_densities_2d();
  torch::manual_seed(9);
  const at::Tensor g = torch::randn({4, 9}, torch::kDouble);
  for (const double alpha : {1.5, 2.0, 3.0}) {
    // <r(mu, sigma), g> with the first three densities (the fourth is a spike of 1e-6).
    const at::Tensor mu0 = d.mu.slice(0, 0, 3), sigma0 = d.sigma.slice(0, 0, 3), g0 = g.slice(0, 0, 3);
    auto loss = [&](const at::Tensor& m, const at::Tensor& s) {
      return (st::continuous_expectation(m, s, centers, widths, alpha) * g0).sum();
    };
    const at::Tensor mu = mu0.clone().requires_grad_(), sigma = sigma0.clone().requires_grad_();
    loss(mu, sigma).backward();
    const double h = 1e-6, tolerance = 1e-6 * (max_abs(mu.grad()) + max_abs(sigma.grad()));
    for (std::int64_t i = 0; i < mu0.numel(); ++i) {
      at::Tensor plus = mu0.clone(), minus = mu0.clone();
      plus.view(-1)[i] += h;
      minus.view(-1)[i] -= h;
      const double fd = (loss(plus, sigma0) - loss(minus, sigma0)).item<double>() / (2 * h);
      EXPECT_NEAR(mu.grad().view(-1)[i].item<double>(), fd, tolerance) << "alpha " << alpha << " mu " << i;
    }
    for (std::int64_t i = 0; i < sigma0.numel(); ++i) {  // one entry at a time: the op uses sym(sigma)
      at::Tensor plus = sigma0.clone(), minus = sigma0.clone();
      plus.view(-1)[i] += h;
      minus.view(-1)[i] -= h;
      const double fd = (loss(mu0, plus) - loss(mu0, minus)).item<double>() / (2 * h);
      EXPECT_NEAR(sigma.grad().view(-1)[i].item<double>(), fd, tolerance) << "alpha " << alpha << " sigma " << i;
    }
  }
}

TEST(GenericExpectation2D, AttentionAgreesWithTheCore) {
  const auto [centers, widths] = st::basis_2d(3, 0.01);
  const Densities2D d = test_densities_2d();
  torch::manual_seed(10);
  const at::Tensor values = torch::randn({4, 3, 5, 2}, torch::kDouble);
  for (const double alpha : {1.5, 2.0, 3.0}) {
    at::Tensor core, generic;
    {
      const BackendScope scope("core");
      core = st::continuous_attention(values, d.mu, d.sigma, centers, widths, 0.1, alpha);
    }
    {
      const BackendScope scope("generic");
      generic = st::continuous_attention(values, d.mu, d.sigma, centers, widths, 0.1, alpha);
    }
    EXPECT_TRUE(torch::allclose(generic, core, 1e-10, 1e-11)) << alpha << ": " << max_abs(generic - core);
  }
}

TEST(GenericExpectation2D, MetaTensorsGiveShapesAndDevices) {
  const auto [c, w] = st::basis_2d(3, 0.01);
  const at::Tensor centers = c.to(torch::kMeta), widths = w.to(torch::kMeta);
  for (const double alpha : {1.5, 2.0, 3.0}) {
    const at::Tensor mu = torch::empty({5, 2}, torch::TensorOptions().device(torch::kMeta).requires_grad(true));
    const at::Tensor sigma = torch::empty({5, 2, 2}, torch::TensorOptions().device(torch::kMeta).requires_grad(true));
    const at::Tensor r = st::continuous_expectation(mu, sigma, centers, widths, alpha);
    EXPECT_EQ(r.sizes(), at::IntArrayRef({5, 9}));
    EXPECT_TRUE(r.is_meta());
    const auto grads = torch::autograd::grad({r.sum()}, {mu, sigma});
    EXPECT_EQ(grads[0].sizes(), at::IntArrayRef({5, 2}));
    EXPECT_EQ(grads[1].sizes(), at::IntArrayRef({5, 2, 2}));
    EXPECT_TRUE(grads[1].is_meta());
    const at::Tensor values = torch::empty({5, 3, 4, 6}, torch::TensorOptions().device(torch::kMeta));
    const at::Tensor context = st::continuous_attention(values, mu, sigma, centers, widths, 0.1, alpha);
    EXPECT_EQ(context.sizes(), at::IntArrayRef({5, 6}));
    EXPECT_TRUE(context.is_meta());
  }
}

}  // namespace
