// Query-conditioned continuous attention from C++: the value model op, query_continuous_attention
// and disc_cont_attention against per-query references built from the one-density op and plain
// ATen arithmetic, padding ignored bit for bit, the module's shapes in every mode, the
// one-density module against its formula, and a training loop in which each query must find a
// different interval of its sequence.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sparcon/torch/modules.h"
#include "sparcon/torch/ops.h"
#include "test_support.h"

namespace {

namespace st = sparcon::torch;
using torch::indexing::Slice;

struct Basis {
  at::Tensor centers, widths;
};

Basis basis_1d(std::int64_t n, at::ScalarType dtype = at::kDouble) {
  auto [c, w] = st::basis_1d(n, {0.1, 0.5});
  return {c.to(dtype), w.to(dtype)};
}

Basis basis_2d(std::int64_t side, at::ScalarType dtype = at::kDouble) {
  auto [c, w] = st::basis_2d(side, 0.01);
  return {c.to(dtype), w.to(dtype)};
}

// Values whose rows past each length hold NaN: nothing may read them.
at::Tensor with_nan_padding(at::Tensor values, const at::Tensor& lengths) {
  for (std::int64_t b = 0; b < values.size(0); ++b)
    values.index_put_({b, Slice(lengths[b].item<std::int64_t>(), torch::indexing::None)},
                      std::numeric_limits<double>::quiet_NaN());
  return values;
}

TEST(ValueModelOp, IsTheRidgeFitAndDifferentiable) {
  torch::manual_seed(3);
  const Basis basis = basis_1d(8);
  const at::Tensor lengths = torch::tensor({9, 4}, torch::kLong);
  const at::Tensor values = torch::randn({2, 9, 3}, torch::kDouble);
  const at::Tensor model = st::value_model(values, basis.centers, basis.widths, 0.05, lengths);
  ASSERT_EQ(model.sizes(), at::IntArrayRef({2, 8, 3}));
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::int64_t l = lengths[b].item<std::int64_t>();
    const at::Tensor g = st::ridge_matrix(basis.centers, basis.widths, {l}, 0.05);  // (L_b, N)
    const at::Tensor want = at::matmul(g.t(), values[b].slice(0, 0, l));
    EXPECT_TRUE(torch::allclose(model[b], want, 1e-12, 1e-13)) << b;
  }
  // Gradient: central differences of <model(values), w> in double, and zero on padding rows.
  const at::Tensor w = torch::randn({2, 8, 3}, torch::kDouble);
  at::Tensor v = values.clone().requires_grad_();
  (st::value_model(v, basis.centers, basis.widths, 0.05, lengths) * w).sum().backward();
  const double h = 1e-6;
  for (const auto& [b, l, f] : std::vector<std::array<std::int64_t, 3>>{{0, 0, 0}, {0, 8, 2}, {1, 3, 1}}) {
    at::Tensor plus = values.clone(), minus = values.clone();
    plus[b][l][f] += h;
    minus[b][l][f] -= h;
    const double fd = ((st::value_model(plus, basis.centers, basis.widths, 0.05, lengths) * w).sum() -
                       (st::value_model(minus, basis.centers, basis.widths, 0.05, lengths) * w).sum())
                          .item<double>() /
                      (2 * h);
    EXPECT_NEAR(v.grad()[b][l][f].item<double>(), fd, 1e-7) << b << " " << l << " " << f;
  }
  EXPECT_EQ(v.grad()[1].slice(0, 4).abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(sparcon_test::throws_naming<c10::ValueError>(
      [&] { st::value_model(values, basis.centers, basis.widths, 0.05, torch::tensor({9, 10}, torch::kLong)); },
      {"lengths"}));
}

// Every query's context equals the one-density op applied to that query's density alone.
TEST(QueryContinuousAttention, EachQueryIsItsOwnDensity) {
  torch::manual_seed(4);
  for (const double alpha : {1.0, 1.5, 2.0}) {
    const Basis basis = basis_1d(16);
    const at::Tensor lengths = torch::tensor({12, 7, 3}, torch::kLong);
    const at::Tensor values = torch::randn({3, 12, 6}, torch::kDouble);
    const at::Tensor mu = torch::rand({3, 5, 2}, torch::kDouble), sigma = 0.005 + 0.1 * torch::rand({3, 5, 2}, torch::kDouble);
    const at::Tensor context =
        st::query_continuous_attention(values, mu, sigma, basis.centers, basis.widths, 0.01, alpha, lengths);
    ASSERT_EQ(context.sizes(), at::IntArrayRef({3, 5, 6}));
    for (std::int64_t q = 0; q < 5; ++q)
      for (std::int64_t k = 0; k < 2; ++k) {  // head k: features 3k..3k+2
        const at::Tensor chunk = values.slice(2, 3 * k, 3 * k + 3).contiguous();
        const at::Tensor want = st::continuous_attention(chunk, mu.select(1, q).select(1, k).contiguous(),
                                                         sigma.select(1, q).select(1, k).contiguous(), basis.centers,
                                                         basis.widths, 0.01, alpha, lengths);
        EXPECT_TRUE(torch::allclose(context.select(1, q).slice(1, 3 * k, 3 * k + 3), want, 1e-12, 1e-13))
            << "alpha " << alpha << " query " << q << " head " << k;
      }
  }
  // 2D: images, one head.
  const Basis basis = basis_2d(4);
  const at::Tensor images = torch::randn({2, 5, 6, 3}, torch::kDouble);
  const at::Tensor mu = 0.2 + 0.6 * torch::rand({2, 4, 2}, torch::kDouble);
  const at::Tensor a = 0.1 * torch::randn({2, 4, 2, 2}, torch::kDouble);
  const at::Tensor sigma = at::matmul(a, a.transpose(-1, -2)) + 0.01 * torch::eye(2, torch::kDouble);
  const at::Tensor context = st::query_continuous_attention(images, mu, sigma, basis.centers, basis.widths, 0.01, 2.0);
  ASSERT_EQ(context.sizes(), at::IntArrayRef({2, 4, 3}));
  for (std::int64_t q = 0; q < 4; ++q) {
    const at::Tensor want = st::continuous_attention(images, mu.select(1, q).contiguous(), sigma.select(1, q).contiguous(),
                                                     basis.centers, basis.widths, 0.01, 2.0);
    EXPECT_TRUE(torch::allclose(context.select(1, q), want, 1e-12, 1e-13)) << "2D query " << q;
  }
}

// disc+cont: the discrete context sum_l p_l h_l (p = alpha-entmax of the masked scores) plus the
// continuous context of the density with p's mean and variance, computed here from the formulas.
TEST(DiscContAttention, IsTheDiscretePlusTheMomentDensity) {
  torch::manual_seed(5);
  const Basis basis = basis_1d(16);
  const at::Tensor lengths = torch::tensor({10, 6}, torch::kLong);
  const at::Tensor values = torch::randn({2, 10, 4}, torch::kDouble);
  const at::Tensor scores = torch::randn({2, 3, 1, 10}, torch::kDouble);
  const auto [context, mu, sigma, p] =
      st::disc_cont_attention(values, scores, basis.centers, basis.widths, 0.01, 1.0, 2.0, 1e-4, lengths);
  ASSERT_EQ(context.sizes(), at::IntArrayRef({2, 3, 4}));
  ASSERT_EQ(p.sizes(), at::IntArrayRef({2, 3, 1, 10}));
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::int64_t l = lengths[b].item<std::int64_t>();
    const at::Tensor t = (torch::arange(l, torch::kDouble) + 0.5) / static_cast<double>(l);
    for (std::int64_t q = 0; q < 3; ++q) {
      const at::Tensor pq = st::sparsemax(scores[b][q][0].slice(0, 0, l), -1);
      EXPECT_TRUE(torch::allclose(p[b][q][0].slice(0, 0, l), pq, 1e-14, 1e-15));
      EXPECT_EQ(p[b][q][0].slice(0, l).abs().sum().item<double>(), 0.0);
      const at::Tensor m = (pq * t).sum(), var = (pq * t * t).sum() - m * m + 1e-4;
      EXPECT_NEAR(mu[b][q][0].item<double>(), m.item<double>(), 1e-14);
      EXPECT_NEAR(sigma[b][q][0].item<double>(), var.item<double>(), 1e-14);  // alpha = 1: sigma^2 = variance
      const at::Tensor discrete = at::matmul(pq, values[b].slice(0, 0, l));
      const at::Tensor continuous =
          st::continuous_attention(values[b].unsqueeze(0), m.view({1}), var.view({1}), basis.centers, basis.widths,
                                   0.01, 1.0, lengths[b].view({1}))[0];
      EXPECT_TRUE(torch::allclose(context[b][q], discrete + continuous, 1e-12, 1e-13)) << b << " " << q;
    }
  }
}

// Values past each length are never read: NaN there gives the same bits as zeros, for every mode.
TEST(ContinuousAttentionModule, PaddingIsIgnoredBitForBit) {
  const at::Tensor lengths = torch::tensor({11, 5, 1}, torch::kLong);
  for (const std::string mode : {"cont", "disc+cont"})
    for (const std::int64_t query_features : {0, 3}) {
      torch::manual_seed(6);
      st::ContinuousAttention attention(st::ContinuousAttentionOptions(4, 1)
                                            .alpha(2.0)
                                            .basis_size(16)
                                            .mode(mode)
                                            .heads(2)
                                            .query_features(query_features)
                                            .discrete_alpha(1.5));
      const at::Tensor values = torch::randn({3, 11, 4});
      const at::Tensor zeros = values.clone(), nans = values.clone();
      for (std::int64_t b = 0; b < 3; ++b) zeros[b].slice(0, lengths[b].item<std::int64_t>()).zero_();
      with_nan_padding(nans, lengths);
      const at::Tensor queries = query_features > 0 ? torch::randn({3, 7, query_features}) : at::Tensor();
      const at::Tensor a = attention(zeros, lengths, queries), b = attention(nans, lengths, queries);
      EXPECT_TRUE(torch::equal(a, b)) << mode << " " << query_features;
      EXPECT_FALSE(a.isnan().any().item<bool>()) << mode << " " << query_features;
      // The same example alone, unpadded: the same context (to rounding).
      const at::Tensor alone =
          attention(values[1].slice(0, 0, 5).unsqueeze(0), at::Tensor(), query_features > 0 ? queries[1].unsqueeze(0) : at::Tensor());
      EXPECT_TRUE(torch::allclose(alone[0], a[1], 1e-5, 1e-6)) << mode << " " << query_features;
    }
}

TEST(ContinuousAttentionModule, ShapesInEveryMode) {
  torch::manual_seed(7);
  for (const int dims : {1, 2})
    for (const std::string mode : {"cont", "disc+cont"})
      for (const std::int64_t heads : {1, 2})
        for (const std::int64_t query_features : {0, 5}) {
          st::ContinuousAttention attention(st::ContinuousAttentionOptions(6, dims)
                                                .basis_size(8)
                                                .grid_side(3)
                                                .variance(0.01)
                                                .mode(mode)
                                                .heads(heads)
                                                .query_features(query_features));
          const at::Tensor values = dims == 1 ? torch::randn({2, 7, 6}) : torch::randn({2, 4, 5, 6});
          const at::Tensor queries = query_features > 0 ? torch::randn({2, 3, 5}) : at::Tensor();
          const at::Tensor context = attention(values, at::Tensor(), queries);
          const std::string what = std::to_string(dims) + "D " + mode + " heads " + std::to_string(heads) +
                                   " queries " + std::to_string(query_features);
          std::vector<std::int64_t> lead = query_features > 0 ? std::vector<std::int64_t>{2, 3} : std::vector<std::int64_t>{2};
          std::vector<std::int64_t> want = lead;
          want.push_back(6);
          EXPECT_EQ(context.sizes(), at::IntArrayRef(want)) << what;
          const auto [mu, sigma] = attention->last_density();
          std::vector<std::int64_t> point = lead;
          if (heads > 1) point.push_back(heads);
          std::vector<std::int64_t> scale = point;
          if (dims == 2) {
            point.push_back(2);
            scale.insert(scale.end(), {2, 2});
          }
          EXPECT_EQ(mu.sizes(), at::IntArrayRef(point)) << what;
          EXPECT_EQ(sigma.sizes(), at::IntArrayRef(scale)) << what;
          // Registered parameters: disc+cont has no head, cont no scores.
          const auto names = attention->named_parameters().keys();
          const bool has_head = std::find(names.begin(), names.end(), "head.weight") != names.end();
          EXPECT_EQ(has_head, mode == "cont") << what;
        }
  st::ContinuousAttention queried(st::ContinuousAttentionOptions(6, 1).query_features(5));
  EXPECT_TRUE(sparcon_test::throws_naming<c10::ValueError>([&] { queried(torch::randn({2, 7, 6})); }, {"queries"}));
  EXPECT_TRUE(sparcon_test::throws_naming<c10::ValueError>(
      [&] { queried(torch::randn({2, 7, 6}), at::Tensor(), torch::randn({2, 3, 4})); }, {"queries"}));
  EXPECT_TRUE(sparcon_test::throws_naming<c10::ValueError>(
      [] { st::ContinuousAttention(st::ContinuousAttentionOptions(6, 1).heads(4)); }, {"heads"}));
}

// Without queries, "cont" is the head on the mean of the values through sigmoid / softplus, and
// the one-density attention of that density: written out here from the formulas.
TEST(ContinuousAttentionModule, OneDensityPerExampleIsTheFormula) {
  torch::manual_seed(8);
  st::ContinuousAttention attention(st::ContinuousAttentionOptions(4, 1).alpha(2.0).basis_size(16));
  attention->to(torch::kDouble);
  const at::Tensor lengths = torch::tensor({9, 4}, torch::kLong);
  const at::Tensor values = torch::randn({2, 9, 4}, torch::kDouble);
  const at::Tensor context = attention(values, lengths);
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::int64_t l = lengths[b].item<std::int64_t>();
    const at::Tensor mean = values[b].slice(0, 0, l).mean(0);
    const at::Tensor out = at::matmul(attention->head->weight, mean) + attention->head->bias;
    const at::Tensor mu = torch::sigmoid(out[0]), sigma = torch::clamp_min(torch::log1p(torch::exp(out[1])), 1e-6);
    const at::Tensor want = st::continuous_attention(values[b].unsqueeze(0), mu.view({1}), sigma.view({1}),
                                                     attention->centers, attention->widths, 0.01, 2.0,
                                                     lengths[b].view({1}))[0];
    EXPECT_TRUE(torch::allclose(context[b], want, 1e-12, 1e-13)) << b;
  }
  // The head starts at mu = 1/2 and sigma^2 = initial_scale (0.05).
  const auto [mu, sigma] = attention->last_density();
  EXPECT_EQ(mu.sizes(), at::IntArrayRef({2}));
  torch::NoGradGuard no_grad;
  attention->head->weight.zero_();
  attention(values, lengths);
  const auto [mu0, sigma0] = attention->last_density();
  EXPECT_TRUE(torch::allclose(mu0, torch::full({2}, 0.5, torch::kDouble), 0, 1e-15));
  EXPECT_TRUE(torch::allclose(sigma0, torch::full({2}, 0.05, torch::kDouble), 1e-7, 0));
}

// Each example: a sequence of length L_b in 16..24 cut into four quarters, each filled with one
// token class (features: one-hot class, 8, then one-hot quarter, 4); four queries, the one-hot
// quarter index, whose answer is the class of their quarter. Chance: loss log 8 = 2.08.
struct Intervals {
  at::Tensor values, lengths, queries, targets;
};

Intervals interval_task(std::int64_t batch, std::uint64_t seed) {
  const auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  Intervals d{torch::zeros({batch, 24, 12}), torch::empty({batch}, torch::kLong),
              torch::eye(4).unsqueeze(0).expand({batch, 4, 4}).contiguous(), torch::empty({batch, 4}, torch::kLong)};
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t l = 16 + 4 * at::randint(0, 3, {1}, gen).item<std::int64_t>();
    d.lengths[b] = l;
    const at::Tensor classes = at::randperm(8, gen, torch::kLong).slice(0, 0, 4);
    for (std::int64_t i = 0; i < l; ++i) {
      const std::int64_t quarter = 4 * i / l;
      d.values[b][i][classes[quarter].item<std::int64_t>()] = 1;
      d.values[b][i][8 + quarter] = 1;
    }
    d.targets[b] = classes;
  }
  d.values += 0.1 * at::randn({batch, 24, 12}, gen);
  return d;
}

TEST(ContinuousAttentionModule, EachQueryLearnsToFindItsInterval) {
  for (const std::string mode : {"cont", "disc+cont"}) {
    torch::manual_seed(9);
    st::ContinuousAttention attention(st::ContinuousAttentionOptions(12, 1)
                                          .alpha(2.0)
                                          .basis_size(32)
                                          .mode(mode)
                                          .query_features(4));
    torch::nn::Linear classify(12, 8);
    std::vector<at::Tensor> parameters = attention->parameters();
    for (const auto& p : classify->parameters()) parameters.push_back(p);
    torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(0.03));
    const Intervals train = interval_task(64, 1), test = interval_task(64, 2);
    auto loss_of = [&](const Intervals& d) {
      const at::Tensor logits = classify(attention(d.values, d.lengths, d.queries));  // (B, 4, 8)
      return torch::nn::functional::cross_entropy(logits.reshape({-1, 8}), d.targets.reshape(-1));
    };
    const double start = loss_of(test).item<double>();
    for (int step = 0; step < 150; ++step) {
      optimizer.zero_grad();
      loss_of(train).backward();
      optimizer.step();
    }
    torch::NoGradGuard no_grad;
    const double end = loss_of(test).item<double>();
    EXPECT_GT(start, 1.5) << mode;
    EXPECT_LT(end, 0.2) << mode << ": from " << start;
    if (mode != "cont") continue;  // disc+cont: the discrete context carries most of the answer
    // Each query's density sits in its own quarter.
    const at::Tensor mu = std::get<0>(attention->last_density());  // (B, 4)
    for (std::int64_t q = 0; q < 4; ++q) {
      const double m = mu.select(1, q).mean().item<double>();
      EXPECT_GT(m, 0.25 * static_cast<double>(q)) << mode << " query " << q;
      EXPECT_LT(m, 0.25 * static_cast<double>(q + 1)) << mode << " query " << q;
    }
  }
}

}  // namespace
