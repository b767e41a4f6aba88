// The VQA model (issue 13): the unrolled EM of the mixtures against the torch-free reference
// fit_mixture and against finite differences; every attention variant learns a tiny fixture
// (its loss falls); localisation of hand-made views; batches; a resumed run equals the
// uninterrupted one, damaged run files are named, predict answers a question; the experiment
// writes its results and a well-formed report. Needs Fashion-MNIST (scripts/setup.sh installs
// it); the tests that read it skip without it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "damaged_files.h"
#include "experiment.h"
#include "html_checker.h"
#include "mixture.h"
#include "test_files.h"
#include "trainer.h"
#include "unrolled_em.h"
#include "vocabulary.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Two (or three) discretised Gaussian blobs on a 14 x 14 grid, plus a small floor.
kit::Matrix blobs(const std::vector<std::array<double, 3>>& centres_and_sd, double floor = 1e-3) {
  kit::Matrix m{14, 14, std::vector<double>(196, floor)};
  for (std::size_t r = 0; r < 14; ++r)
    for (std::size_t c = 0; c < 14; ++c)
      for (const auto& [t0, t1, sd] : centres_and_sd) {
        const double d0 = (r + 0.5) / 14 - t0, d1 = (c + 0.5) / 14 - t1;
        m.values[r * 14 + c] += std::exp(-(d0 * d0 + d1 * d1) / (2 * sd * sd));
      }
  return m;
}

at::Tensor as_tensor(const kit::Matrix& m) {
  return torch::tensor(m.values, torch::kDouble).reshape({1, static_cast<std::int64_t>(m.rows), static_cast<std::int64_t>(m.cols)});
}

TEST(UnrolledEm, MatchesTheTorchFreeReferenceStepByStep) {
  const std::vector<kit::Matrix> maps{blobs({{0.25, 0.3, 0.06}, {0.7, 0.75, 0.08}}),
                                      blobs({{0.2, 0.2, 0.05}, {0.5, 0.8, 0.07}, {0.8, 0.3, 0.06}}),
                                      blobs({{0.5, 0.5, 0.2}}, 0.0)};
  for (std::size_t m = 0; m < maps.size(); ++m)
    for (const int k : {1, 2, 3})
      for (const int steps : {0, 1, 3, 30}) {
        SCOPED_TRACE("map " + std::to_string(m) + ", K " + std::to_string(k) + ", steps " + std::to_string(steps));
        const auto reference = vqa::fit_mixture(maps[m], {k, steps, 1e-4});
        const vqa::GaussianMixture got = vqa::unrolled_em(as_tensor(maps[m]), k, steps, 1e-4);
        // The reference sorts by weight; match each of its components to the nearest mean.
        for (const auto& c : reference) {
          std::int64_t best = 0;
          double distance = INFINITY;
          for (std::int64_t j = 0; j < k; ++j) {
            const double d = std::hypot(got.mean[0][j][0].item<double>() - c.mean[0], got.mean[0][j][1].item<double>() - c.mean[1]);
            if (d < distance) distance = d, best = j;
          }
          EXPECT_LT(distance, 1e-12);
          EXPECT_NEAR(got.weight[0][best].item<double>(), c.weight, 1e-12);
          for (int e = 0; e < 4; ++e)
            EXPECT_NEAR(got.covariance[0][best][e / 2][e % 2].item<double>(), c.covariance[static_cast<std::size_t>(e)], 1e-12);
        }
      }
}

TEST(UnrolledEm, GradientsMatchFiniteDifferences) {
  const at::Tensor map = as_tensor(blobs({{0.3, 0.3, 0.07}, {0.7, 0.6, 0.09}})).requires_grad_(true);
  const at::Tensor direction = torch::randn({1, 2, 2}, torch::kDouble);  // a fixed linear functional of mu
  auto objective = [&](const at::Tensor& p) {
    const vqa::GaussianMixture m = vqa::unrolled_em(p, 2, 3, 1e-4);
    return (m.mean * direction).sum() + m.covariance.sum() * 10 + (m.weight * m.weight).sum();
  };
  objective(map).backward();
  const at::Tensor grad = map.grad();
  // Central differences on a few cells (the start is piecewise constant in the map: the cells are
  // chosen away from ties, and eps small enough not to move the start).
  for (const std::int64_t cell : {0L, 45L, 60L, 101L, 150L, 195L}) {
    const double eps = 1e-6;
    at::Tensor plus = map.detach().clone(), minus = map.detach().clone();
    plus.view({-1})[cell] += eps;
    minus.view({-1})[cell] -= eps;
    const double numeric = (objective(plus).item<double>() - objective(minus).item<double>()) / (2 * eps);
    EXPECT_NEAR(grad.view({-1})[cell].item<double>(), numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << cell;
  }
}

TEST(UnrolledEm, BadArgumentsAreNamed) {
  const at::Tensor map = torch::ones({1, 4, 4});
  EXPECT_THROW(vqa::unrolled_em(torch::ones({4, 4}), 2, 1, 1e-4), std::invalid_argument);
  try {
    vqa::unrolled_em(map, 9, 1, 1e-4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("components = 9"));
  }
  EXPECT_THROW(vqa::unrolled_em(map, 2, -1, 1e-4), std::invalid_argument);
  EXPECT_THROW(vqa::unrolled_em(map, 2, 1, 0.0), std::invalid_argument);
}

TEST(VqaModel, VariantsByNameAndUnknownOnesNamed) {
  EXPECT_EQ(vqa::variant_names().size(), 9u);
  for (const auto& name : vqa::variant_names()) EXPECT_EQ(vqa::parse_variant(name).name, name);
  EXPECT_EQ(vqa::parse_variant("cont-sparsemax").kind, "cont");
  EXPECT_EQ(vqa::parse_variant("cont-sparsemax").alpha, 2.0);
  EXPECT_EQ(vqa::parse_variant("disc-softmax").kind, "disc+cont");
  EXPECT_EQ(vqa::parse_variant("mix3").components, 3);
  try {
    vqa::parse_variant("mix4");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'mix4'"));
    EXPECT_THAT(e.what(), HasSubstr("mix3"));
  }
}

// A hand-made view of one question: a 14 x 14 map and, for continuous variants, one density.
vqa::AttentionView view_of(const kit::Matrix& map, const std::vector<std::array<double, 6>>& densities = {}) {
  vqa::AttentionView v;
  v.weights = as_tensor(map);
  if (!densities.empty()) {
    std::vector<double> mean, sigma, weight;
    for (const auto& d : densities) {
      mean.insert(mean.end(), {d[0], d[1]});
      sigma.insert(sigma.end(), {d[2], d[3], d[3], d[4]});
      weight.push_back(d[5]);
    }
    const auto k = static_cast<std::int64_t>(densities.size());
    v.mean = torch::tensor(mean, torch::kDouble).reshape({1, k, 2});
    v.sigma = torch::tensor(sigma, torch::kDouble).reshape({1, k, 2, 2});
    v.weight = torch::tensor(weight, torch::kDouble).reshape({1, k});
  }
  return v;
}

TEST(VqaModel, LocaliseReadsTheVariantsAttention) {
  // Evidence: the box of rows [0, 0.5] x columns [0, 0.5] (cells 0..6 x 0..6).
  const std::vector<vqa::Rect> evidence{{0, 0.5, 0, 0.5}};
  kit::Matrix map{14, 14, std::vector<double>(196, 0.0)};
  map.values[3 * 14 + 3] = 0.75;   // inside
  map.values[10 * 14 + 10] = 0.25;  // outside
  const auto sparse = vqa::localise(view_of(map), 0, vqa::parse_variant("sparsemax"), evidence);
  EXPECT_NEAR(sparse.mass, 0.75, 1e-12);
  EXPECT_NEAR(sparse.support.area, 2.0 / 196, 1e-12);
  EXPECT_NEAR(sparse.support.inside, 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(vqa::localise(view_of(map), 0, vqa::parse_variant("softmax"), evidence).support.iou));
  // A Gaussian (sd 0.1) centred at the box's corner (0.5, 0.5): its mass in [0, 0.5]^2 is
  // (Phi(0) - Phi(-5))^2 per axis independence.
  const auto corner = vqa::localise(view_of(map, {{0.5, 0.5, 0.01, 0.0, 0.01, 1.0}}), 0,
                                    vqa::parse_variant("cont-softmax"), evidence);
  const double axis = 0.5 - 0.5 * std::erfc(5 / std::sqrt(2.0));
  EXPECT_NEAR(corner.mass, axis * axis, 1e-12);
  // A mixture: pi-weighted masses (one component deep inside the box, one far outside).
  const auto mixture = vqa::localise(view_of(map, {{0.25, 0.25, 1e-3, 0.0, 1e-3, 0.6}, {0.8, 0.8, 1e-3, 0.0, 1e-3, 0.4}}),
                                     0, vqa::parse_variant("mix2"), evidence);
  EXPECT_NEAR(mixture.mass, 0.6, 1e-6);
  // Continuous sparsemax centred in the box, small: its whole support inside.
  const auto ellipse = vqa::localise(view_of(map, {{0.25, 0.25, 1e-3, 0.0, 1e-3, 1.0}}), 0,
                                     vqa::parse_variant("cont-sparsemax"), evidence);
  EXPECT_NEAR(ellipse.mass, 1.0, 1e-9);
  EXPECT_NEAR(ellipse.support.inside, 1.0, 1e-9);
  EXPECT_GT(ellipse.support.area, 0.0);
}

class VqaData : public sparcon_test::TempDirTest {
 protected:
  void SetUp() override {
    if (!vqa::fashion_mnist_present(vqa::kFashionMnistFolder)) GTEST_SKIP() << "no " << vqa::kFashionMnistFolder;
    sparcon_test::TempDirTest::SetUp();
    static const vqa::Datasets shared = [] {
      vqa::DataOptions o;
      o.train_scenes = 12;
      o.test_scenes = 4;
      return vqa::make_datasets(vqa::load_fashion_mnist(vqa::kFashionMnistFolder, vqa::Split::kTrain),
                                vqa::load_fashion_mnist(vqa::kFashionMnistFolder, vqa::Split::kTest), o, 4);
    }();
    data_ = &shared;
  }
  static vqa::TrainOptions tiny(const std::string& variant) {
    vqa::TrainOptions o;
    o.variant = variant;
    o.features = 16;
    o.batch_scenes = 4;
    o.epochs = 2;
    o.progress = false;
    return o;
  }
  const vqa::Datasets* data_ = nullptr;
};

TEST_F(VqaData, DevScenesComeAfterTheTrainingScenesAndBatchesHoldEachSceneOnce) {
  ASSERT_EQ(data_->train.scenes.size(), 12u);
  ASSERT_EQ(data_->dev.scenes.size(), 4u);
  for (std::size_t s = 0; s < 4; ++s) EXPECT_EQ(data_->dev.scenes[s].index, 12 + s);
  for (const auto& e : data_->dev.examples) EXPECT_LT(e.scene, 4u);
  const vqa::Batch b = vqa::make_batch(data_->train, {0, 1, 2, 3, 4});
  const std::size_t first_two = static_cast<std::size_t>(data_->train.examples[4].scene) + 1;
  EXPECT_EQ(b.images.size(0), static_cast<std::int64_t>(first_two));
  EXPECT_EQ(b.images.sizes(), (std::vector<std::int64_t>{b.images.size(0), 1, 84, 84}));
  for (std::int64_t i = 0; i < 5; ++i) {
    const auto& e = data_->train.examples[static_cast<std::size_t>(i)];
    EXPECT_EQ(b.scene[i].item<std::int64_t>(), static_cast<std::int64_t>(e.scene));
    EXPECT_EQ(b.answers[i].item<std::int64_t>(), vqa::answer_vocabulary().id(e.question.answer));
    EXPECT_EQ(b.lengths[i].item<std::int64_t>(), static_cast<std::int64_t>(vqa::tokenize(e.question.text).size()));
  }
  // Pixels in [0, 1], the scene's bytes / 255.
  const auto& img = data_->train.scenes[0].image;
  EXPECT_NEAR(b.images[0][0][40][40].item<double>(), img.pixels[40 * 84 + 40] / 255.0, 1e-7);
  try {
    vqa::question_batch(kit::Image{28, 28, 1, std::vector<std::uint8_t>(784)}, "what is in the centre ?");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("28 x 28"));
  }
  EXPECT_THROW(vqa::question_batch(img, "  "), std::invalid_argument);
}

class VqaVariant : public VqaData, public ::testing::WithParamInterface<std::string> {};

TEST_P(VqaVariant, LearnsAFixedBatchAndPaddingChangesNoAnswer) {
  vqa::TrainOptions o = tiny(GetParam());
  vqa::VqaModel model = vqa::seeded_model(o);
  torch::optim::Adam optimiser(model->parameters(), torch::optim::AdamOptions(3e-3));
  std::vector<std::size_t> examples;
  for (std::size_t i = 0; i < 16 && i < data_->train.examples.size(); ++i) examples.push_back(i);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    optimiser.zero_grad();
    const at::Tensor loss = vqa::batch_loss(model, data_->train, examples);
    ASSERT_TRUE(std::isfinite(loss.item<double>())) << step;
    loss.backward();
    optimiser.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_GT(first, 1.5);
  EXPECT_LT(last, 0.35 * first) << "from " << first;
  // A question's answer and attention do not depend on the other questions of its batch (padding
  // of the words, other scenes).
  model->eval();
  torch::NoGradGuard no_grad;
  vqa::AttentionView alone, together;
  const at::Tensor a = model(vqa::make_batch(data_->train, {5}), &alone);
  const at::Tensor b = model(vqa::make_batch(data_->train, {0, 1, 2, 3, 4, 5, 9}), &together);
  EXPECT_TRUE(torch::allclose(a[0], b[5], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(alone.weights[0], together.weights[5], 1e-5, 1e-6));
  if (model->options.variant.continuous()) {
    EXPECT_TRUE(torch::allclose(alone.mean[0], together.mean[5], 1e-5, 1e-6));
    EXPECT_NEAR(together.weight[5].sum().item<double>(), 1.0, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, VqaVariant, ::testing::ValuesIn(vqa::variant_names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST_F(VqaData, ResumedRunEqualsTheUninterruptedOneAndPredictAnswers) {
  vqa::TrainOptions o = tiny("cont-sparsemax");
  o.epochs = 3;
  o.patience = 3;
  o.out = dir_ / "straight";
  const vqa::TrainResult straight = vqa::train(*data_, o);
  o.out = dir_ / "interrupted";
  o.epochs = 1;
  vqa::train(*data_, o);
  EXPECT_THROW(vqa::train(*data_, o), std::runtime_error);  // never overwritten without --resume
  o.epochs = 3;
  o.resume = true;
  const vqa::TrainResult resumed = vqa::train(*data_, o);
  EXPECT_EQ(straight.best_epoch, resumed.best_epoch);
  EXPECT_EQ(straight.test.correct, resumed.test.correct);
  EXPECT_EQ(straight.test.localisation.mass(), resumed.test.localisation.mass());
  const auto history = [](const fs::path& dir) {
    auto state = nlohmann::json::parse(sparcon_test::read(dir / "state.json"));
    for (auto& e : state["history"]) e.erase("seconds");
    return state["history"].dump();
  };
  EXPECT_EQ(history(dir_ / "straight"), history(dir_ / "interrupted"));
  vqa::VqaModel a = vqa::load_best(dir_ / "straight"), b = vqa::load_best(dir_ / "interrupted");
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  for (const auto& p : a->named_buffers()) EXPECT_TRUE(torch::equal(p.value(), b->named_buffers()[p.key()])) << p.key();
  // predict: an answer of the vocabulary, its probability, the attention of one question.
  const vqa::Answer answer = vqa::predict(a, data_->test.scenes[0].image, "How many shoes are there?");
  EXPECT_TRUE(vqa::answer_vocabulary().contains(answer.answer));
  EXPECT_GT(answer.probability, 0.0);
  EXPECT_LE(answer.probability, 1.0);
  EXPECT_EQ(answer.attention.mean.sizes(), (std::vector<std::int64_t>{1, 1, 2}));
  // Every damage of state.json and of the best checkpoint is one line naming the file.
  sparcon_test::expect_run_damage_reported(dir_ / "straight", [&] { vqa::load_best(dir_ / "straight"); });
}

TEST_F(VqaData, TheExperimentWritesResultsAndAWellFormedReport) {
  vqa::ExperimentOptions options;
  options.variants = {"sparsemax", "cont-sparsemax", "mix2"};
  options.train = tiny("softmax");
  options.train.epochs = 1;
  options.out = dir_;
  options.report_per_type = 1;
  const auto results = vqa::run_experiment(*data_, options);
  ASSERT_EQ(results.size(), 3u);
  const auto json = nlohmann::json::parse(sparcon_test::read(dir_ / "results.json"));
  ASSERT_EQ(json.at("variants").size(), 3u);
  EXPECT_EQ(json.at("variants")[2].at("name"), "mix2");
  EXPECT_TRUE(json.at("variants")[0].contains("accuracy_relation"));
  EXPECT_THAT(sparcon_test::read(dir_ / "results.md"), HasSubstr("| cont-sparsemax |"));
  const std::string html = sparcon_test::read(dir_ / "report.html");
  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_THAT(html, HasSubstr("class=\"heatmap-layer\""));
  EXPECT_THAT(html, HasSubstr("class=\"evidence\""));
  EXPECT_THAT(html, HasSubstr("class=\"support\""));    // the continuous sparsemax ellipse
  EXPECT_THAT(html, HasSubstr("class=\"component\""));  // the mixture's components
  EXPECT_THAT(html, HasSubstr("class=\"contour\""));
}

}  // namespace
