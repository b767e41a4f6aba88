// kit/training_run.h on a model of its own (a linear regression trained by Adam): an
// interrupted run resumed is bit for bit the uninterrupted one, the best epoch's weights come
// back, an existing run is never overwritten and other options are refused; every damage of a
// checkpoint (truncated, overwritten, of another model, missing) is kit::DamagedFile naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "kit/training_run.h"
#include "damaged_files.h"
#include "test_files.h"

namespace {

using ::testing::HasSubstr;
using TrainingRunTest = sparcon_test::TempDirTest;

struct Regression {
  torch::nn::Linear model{nullptr};
  std::unique_ptr<torch::optim::Adam> optimiser;
  Regression() {
    torch::manual_seed(3);
    model = torch::nn::Linear(3, 1);
    optimiser = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(0.05));
  }
};

// One epoch: a few Adam steps on data drawn from (seed, epoch) only; the dev score is minus the
// loss on fixed data, so that it rises and then wobbles.
double train_epoch(Regression& r, std::size_t epoch) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1000 + epoch);
  const at::Tensor x = torch::randn({64, 3}, generator);
  const at::Tensor y = x.matmul(torch::tensor({1.0F, -2.0F, 0.5F})).unsqueeze(1) + 0.3;
  double sum = 0;
  for (int step = 0; step < 5; ++step) {
    r.optimiser->zero_grad();
    const at::Tensor loss = torch::mse_loss(r.model(x), y);
    loss.backward();
    r.optimiser->step();
    sum += loss.item<double>();
  }
  return sum / 5;
}

double dev_score(Regression& r) {
  torch::NoGradGuard no_grad;
  const at::Tensor x = torch::linspace(-1, 1, 30).reshape({10, 3});
  const at::Tensor y = x.matmul(torch::tensor({1.0F, -2.0F, 0.5F})).unsqueeze(1) + 0.3;
  return -torch::mse_loss(r.model(x), y).item<double>();
}

kit::RunState run(const std::filesystem::path& dir, std::size_t epochs, bool resume, Regression& r,
                  nlohmann::json options = {{"lr", 0.05}}) {
  options["epochs"] = epochs;
  kit::TrainingRun training({dir, options, {{"rows", 64}}, {"epochs"}, resume, "regression"}, *r.model, *r.optimiser);
  for (std::size_t epoch = training.next_epoch(); epoch <= epochs && !training.patience_exhausted(epoch, 10); ++epoch)
    training.save_epoch({epoch, train_epoch(r, epoch), dev_score(r), 0.0}, *r.model, *r.optimiser);
  return training.state();
}

TEST_F(TrainingRunTest, ResumedRunEqualsTheUninterruptedOneBitForBit) {
  Regression straight, first, second;
  const auto a = run(dir_ / "straight", 4, false, straight);
  run(dir_ / "interrupted", 2, false, first);  // stopped after epoch 2
  const auto b = run(dir_ / "interrupted", 4, true, second);  // a fresh process would start here
  ASSERT_EQ(b.history.size(), 4u);
  for (std::size_t e = 0; e < 4; ++e) {
    EXPECT_EQ(b.history[e].train_loss, a.history[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(b.history[e].dev_score, a.history[e].dev_score) << "epoch " << e + 1;
  }
  EXPECT_TRUE(torch::equal(second.model->weight, straight.model->weight));
  EXPECT_EQ(b.best_epoch, a.best_epoch);
  EXPECT_EQ(sparcon_test::entries(dir_ / "interrupted"),
            (std::vector<std::string>{"best-" + std::to_string(b.best_epoch) + ".pt", "model-4.pt", "optimizer-4.pt",
                                      "state.json"}));
}

TEST_F(TrainingRunTest, LoadBestRestoresTheBestEpochsWeights) {
  Regression r;
  kit::TrainingRun training({dir_, {{"lr", 0.05}}, {}, {}, false, "best"}, *r.model, *r.optimiser);
  training.save_epoch({1, 1.0, 0.5, 0.0}, *r.model, *r.optimiser);
  const at::Tensor best = r.model->weight.detach().clone();
  {
    torch::NoGradGuard no_grad;
    r.model->weight.add_(1.0);
  }
  EXPECT_FALSE(training.save_epoch({2, 1.0, 0.25, 0.0}, *r.model, *r.optimiser));  // worse: not the best
  training.load_best(*r.model);
  EXPECT_TRUE(torch::equal(r.model->weight, best));
}

TEST_F(TrainingRunTest, AnExistingRunIsNeverOverwrittenAndOtherOptionsAreRefused) {
  Regression r, again, other;
  run(dir_, 1, false, r);
  try {
    run(dir_, 2, false, again);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--resume"));
  }
  try {
    run(dir_, 2, true, other, {{"lr", 0.1}});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("option lr = 0.05"));
    EXPECT_THAT(e.what(), HasSubstr("lr = 0.1"));
  }
  Regression more;
  EXPECT_EQ(run(dir_, 3, true, more).history.size(), 3u);  // more epochs are allowed
}

// Resume loads model-E.pt and optimizer-E.pt; load_best loads best-K.pt. Each damaged in
// every way of damages() (and replaced by a checkpoint of another structure) is reported as
// one line naming it; with the file restored the run resumes.
TEST_F(TrainingRunTest, EveryDamagedCheckpointIsOneLineNamingIt) {
  Regression r;
  const kit::RunState state = run(dir_, 2, false, r);
  const kit::RunDirectory directory(dir_);
  for (const std::string key : {"model", "optimizer", "best"}) {
    const std::filesystem::path file = directory.checkpoint_file(state, key);
    const std::string good = sparcon_test::read(file);
    std::vector<sparcon_test::Damage> damages = sparcon_test::damages(good);
    // A checkpoint of something else: the optimiser's state in the model's file and back, a
    // model of another size.
    {
      torch::nn::Linear wider(5, 2);
      const std::filesystem::path other = dir_ / "other.tmp.pt";
      if (key == "optimizer") {
        kit::save_checkpoint(*wider, other);
      } else {
        kit::save_checkpoint(*r.optimiser, other);
        damages.push_back({"the optimiser's checkpoint", sparcon_test::read(other)});
        kit::save_checkpoint(*wider, other);
      }
      damages.push_back({"a checkpoint of another model", sparcon_test::read(other)});
      std::filesystem::remove(other);
    }
    for (const sparcon_test::Damage& damage : damages) {
      sparcon_test::apply(damage, file);
      Regression fresh;
      const auto call = [&] {
        if (key == "best") {
          kit::TrainingRun training({dir_, {{"lr", 0.05}, {"epochs", 2}}, {{"rows", 64}}, {"epochs"}, true, "regression"},
                                    *fresh.model, *fresh.optimiser);
          training.load_best(*fresh.model);
        } else {
          run(dir_, 2, true, fresh);
        }
      };
      if (damage.name == "middle bytes overwritten") {
        // Bytes inside a stored tensor may go unnoticed; nothing may crash, and an error names the file.
        try {
          call();
        } catch (const kit::DamagedFile& e) {
          EXPECT_EQ(e.file(), file) << e.what();
        }
        continue;
      }
      EXPECT_TRUE(sparcon_test::reports_damaged(call, file)) << key << ": " << damage.name;
    }
    sparcon_test::restore(file, good);
  }
  Regression resumed;
  EXPECT_EQ(run(dir_, 3, true, resumed).history.size(), 3u);
}

}  // namespace
