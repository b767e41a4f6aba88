// The LibTorch layer from C++: ops equal the core bit for bit, and the torch::nn modules have
// the right shapes, honour masks and lengths, and train.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
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

}  // namespace
