// The training side of the text-classification experiment on a small synthetic corpus made
// here: every attention variant learns, checkpoints round-trip, --resume continues an
// interrupted run exactly, an experiment writes its results and a report, and every damaged
// file of a run directory (state.json, vocabulary.txt, the checkpoints) is reported by predict
// (load_best) and train --resume as one line naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "damaged_files.h"
#include "experiment.h"
#include "trainer.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// 160 messages: spam bodies mention some of {cheap, pills, winner, money, offer}, ham ones some
// of {meeting, project, review, schedule, notes}, both inside random filler words.
spam::Dataset fixture() {
  std::mt19937 rng(5);
  const std::vector<std::string> spam_words{"cheap", "pills", "winner", "money", "offer"};
  const std::vector<std::string> ham_words{"meeting", "project", "review", "schedule", "notes"};
  const std::vector<std::string> filler{"the", "a", "of", "and", "to", "in", "is", "you", "that", "it",
                                        "for", "on", "with", "as", "this", "be", "at", "by", "from", "or"};
  std::vector<spam::Message> messages;
  for (int i = 0; i < 160; ++i) {
    const int label = i % 3 == 0 ? 1 : 0;
    std::ostringstream body;
    const int length = 8 + static_cast<int>(rng() % 20);
    for (int w = 0; w < length; ++w) {
      if (rng() % 4 == 0) body << (label ? spam_words : ham_words)[rng() % 5] << ' ';
      else body << filler[rng() % filler.size()] << ' ';
    }
    messages.push_back({std::to_string(i), label ? "spam-1" : "easy-ham-1", label, body.str()});
  }
  spam::DataOptions options;
  options.dev_fraction = 0.2;
  options.test_fraction = 0.2;
  options.min_count = 1;
  return spam::prepare_data(std::move(messages), options);
}

spam::TrainOptions small(const std::string& variant, const fs::path& out, std::size_t epochs) {
  spam::TrainOptions o;
  o.variant = variant;
  o.out = out;
  o.epochs = epochs;
  o.patience = 10;
  o.embedding = 8;
  o.hidden = 8;
  o.batch_size = 16;
  o.learning_rate = 1e-2;
  o.progress = false;
  return o;
}

class Training : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(1);
    root_ = fs::temp_directory_path() / ("spam_training_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(Training, EveryVariantLearns) {
  const spam::Dataset data = fixture();
  for (const std::string variant : {"softmax", "sparsemax", "entmax15", "cont-softmax-8", "cont-sparsemax-8",
                                    "disc-softmax-8", "disc-sparsemax-8"}) {
    const auto r = spam::train(data, small(variant, root_ / variant, 6));
    ASSERT_EQ(r.history.size(), 6u) << variant;
    EXPECT_LT(r.history.back().train_loss, 0.8 * r.history.front().train_loss) << variant;
    EXPECT_GT(r.test_accuracy, 0.75) << variant;
    EXPECT_GT(r.sparsity, 0.0) << variant;
    EXPECT_LE(r.sparsity, 1.0) << variant;
  }
}

TEST_F(Training, CheckpointRoundTripGivesIdenticalPredictions) {
  const spam::Dataset data = fixture();
  const auto r = spam::train(data, small("cont-sparsemax-8", root_, 3));
  spam::LoadedModel a = spam::load_best(root_), b = spam::load_best(root_);
  EXPECT_EQ(spam::evaluate(a.model, data, data.split.test, 16), r.test_accuracy);
  for (auto i : data.split.test) {
    const auto va = spam::document_view(a.model, data, i), vb = spam::document_view(b.model, data, i);
    ASSERT_EQ(va.spam_probability, vb.spam_probability);
    ASSERT_EQ(va.density, vb.density);
  }
  const spam::Prediction p = spam::predict(a, data.messages[data.split.test.front()].body);
  EXPECT_EQ(p.label, spam::document_view(a.model, data, data.split.test.front()).predicted);
  EXPECT_LE(p.begin, p.end);
  EXPECT_LT(p.end, p.tokens.size());
  EXPECT_THROW(spam::load_best(root_ / "nothing"), std::runtime_error);
}

// What predict reads (load_best: state.json, vocabulary.txt, best-K.pt) and what train --resume
// reads (state.json, model-E.pt, optimizer-E.pt), each damaged in every way of damages().
TEST_F(Training, EveryDamagedFileOfARunIsOneLineNamingIt) {
  const spam::Dataset data = fixture();
  const auto trained = spam::train(data, small("sparsemax", root_, 2));
  auto resume = small("sparsemax", root_, 2);  // resumes, trains nothing, tests the best epoch: writes nothing
  resume.resume = true;
  const auto predict = [&] { (void)spam::load_best(root_); };
  const auto train_resume = [&] { (void)spam::train(data, resume); };
  const std::string best = "best-" + std::to_string(trained.best_epoch) + ".pt";
  struct Case {
    std::string name;
    bool resume;  // train --resume, else predict
  };
  for (const auto& [name, resumes] : std::vector<Case>{{"state.json", false}, {"vocabulary.txt", false}, {best, false},
                                                      {"state.json", true}, {"model-2.pt", true}, {"optimizer-2.pt", true}}) {
    const std::function<void()> call = resumes ? std::function<void()>(train_resume) : std::function<void()>(predict);
    const fs::path file = root_ / name;
    const std::string good = sparcon_test::read(file);
    for (const sparcon_test::Damage& damage : sparcon_test::damages(good)) {
      // Without state.json there is no run: predict says so, and --resume starts one (as after
      // an interruption during the first epoch), tested elsewhere.
      if (damage.remove && name == "state.json") {
        if (!resumes) {
          sparcon_test::apply(damage, file);
          EXPECT_THROW(call(), std::runtime_error);
          sparcon_test::restore(file, good);
        }
        continue;
      }
      sparcon_test::apply(damage, file);
      if (damage.name == "last byte missing" && name == "vocabulary.txt") {  // only its final newline: the same tokens
        EXPECT_NO_THROW(call());
        sparcon_test::restore(file, good);
        continue;
      }
      if (damage.name == "middle bytes overwritten" && name != "state.json" && name != "vocabulary.txt") {
        try {  // bytes inside a stored tensor may go unnoticed; an error names the file
          call();
        } catch (const kit::DamagedFile& e) {
          EXPECT_EQ(e.file(), file) << e.what();
        }
        sparcon_test::restore(file, good);
        continue;
      }
      EXPECT_TRUE(sparcon_test::reports_damaged(call, file)) << name << ": " << damage.name;
      sparcon_test::restore(file, good);
    }
  }
  // One token dropped from the vocabulary, or two swapped: another vocabulary than the run's.
  const std::string vocabulary = sparcon_test::read(root_ / "vocabulary.txt");
  std::string swapped = vocabulary;
  const auto first_end = swapped.find('\n'), second_end = swapped.find('\n', first_end + 1);
  swapped = swapped.substr(first_end + 1, second_end - first_end) + swapped.substr(0, first_end + 1) +
            swapped.substr(second_end + 1);
  for (const std::string& bad : {vocabulary.substr(vocabulary.find('\n') + 1), swapped}) {
    sparcon_test::restore(root_ / "vocabulary.txt", bad);
    EXPECT_TRUE(sparcon_test::reports_damaged(predict, root_ / "vocabulary.txt"));
  }
  sparcon_test::restore(root_ / "vocabulary.txt", vocabulary);
  // Restored, the run predicts and resumes.
  EXPECT_NO_THROW(predict());
  resume.epochs = 3;
  EXPECT_EQ(spam::train(data, resume).history.size(), 3u);
}

TEST_F(Training, ResumeContinuesAnInterruptedRunExactly) {
  const spam::Dataset data = fixture();
  const auto straight = spam::train(data, small("sparsemax", root_ / "straight", 4));
  spam::train(data, small("sparsemax", root_ / "interrupted", 2));  // "stopped" after epoch 2
  auto resume = small("sparsemax", root_ / "interrupted", 4);
  resume.resume = true;
  const auto resumed = spam::train(data, resume);
  ASSERT_EQ(resumed.history.size(), 4u);
  for (std::size_t e = 0; e < 4; ++e) {
    EXPECT_EQ(resumed.history[e].epoch, e + 1);
    EXPECT_EQ(resumed.history[e].train_loss, straight.history[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(resumed.history[e].dev_accuracy, straight.history[e].dev_accuracy) << "epoch " << e + 1;
  }
  EXPECT_EQ(resumed.test_accuracy, straight.test_accuracy);
  // A finished run resumes to itself; another variant's run is refused.
  EXPECT_EQ(spam::train(data, resume).history.size(), 4u);
  auto other = small("softmax", root_ / "interrupted", 4);
  other.resume = true;
  EXPECT_THROW(spam::train(data, other), std::runtime_error);
}

TEST_F(Training, ResumeRefusesOtherOptionsOrDataAndTrainRefusesAnExistingRun) {
  const spam::Dataset data = fixture();
  spam::train(data, small("sparsemax", root_, 1));
  auto again = small("sparsemax", root_, 2);
  try {  // without --resume an existing run is never overwritten
    spam::train(data, again);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--resume"));
  }
  again.resume = true;
  again.hidden = 16;
  try {
    spam::train(data, again);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("hidden = 8"));
    EXPECT_THAT(e.what(), HasSubstr("hidden = 16"));
  }
  again.hidden = 8;
  again.max_length = 5;  // the data a run was trained on is part of its state too
  try {
    spam::train(data, again);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("max_length"));
  }
  again.max_length = small("sparsemax", root_, 2).max_length;
  EXPECT_EQ(spam::train(data, again).history.size(), 2u);  // more epochs are allowed
  // A damaged state.json is named.
  std::ofstream(root_ / "state.json") << "{ not json";
  try {
    spam::train(data, again);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("state.json"));
  }
}

// An interruption while an epoch's checkpoint is being written leaves files that state.json
// does not name: the resumed run starts from the last complete epoch and removes them.
TEST_F(Training, AnInterruptedCheckpointWriteResumesFromTheLastCompleteEpoch) {
  const spam::Dataset data = fixture();
  const auto straight = spam::train(data, small("entmax15", root_ / "straight", 3));
  spam::train(data, small("entmax15", root_ / "interrupted", 2));
  for (const char* name : {"model-3.pt", "best-3.pt", "optimizer-3.pt.tmp.999", "state.json.tmp.999"})
    std::ofstream(root_ / "interrupted" / name) << "half-written";
  auto resume = small("entmax15", root_ / "interrupted", 3);
  resume.resume = true;
  const auto resumed = spam::train(data, resume);
  ASSERT_EQ(resumed.history.size(), 3u);
  for (std::size_t e = 0; e < 3; ++e)
    EXPECT_EQ(resumed.history[e].train_loss, straight.history[e].train_loss) << "epoch " << e + 1;
  EXPECT_EQ(resumed.test_accuracy, straight.test_accuracy);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(root_ / "interrupted")) files.push_back(entry.path().filename());
  std::sort(files.begin(), files.end());
  const std::string best = "best-" + std::to_string(resumed.best_epoch) + ".pt";
  std::vector<std::string> want{best, "model-3.pt", "optimizer-3.pt", "state.json", "vocabulary.txt"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(files, want);
}

// The corpus holds copies of some e-mails: they are dropped before the split, so that no test
// document is a training document. Copies are judged on the kept tokens (max_length).
TEST(TrainingData, DuplicatesAreDroppedBeforeTheSplit) {
  std::vector<spam::Message> messages;
  for (int i = 0; i < 40; ++i)
    messages.push_back({std::to_string(i), i % 2 ? "spam-1" : "easy-ham-1", i % 2,
                        "word" + std::to_string(i) + " common text here"});
  messages.push_back({"40", "spam-2", 1, "Word3   COMMON text here!"});          // tokens of 3
  messages.push_back({"41", "spam-2", 1, "word5 common text here and more"});   // 5 within max_length 4
  messages.push_back({"42", "spam-2", 1, "word7 common text"});                 // not a copy
  spam::DataOptions options;
  options.max_length = 4;
  options.min_count = 1;
  const spam::Dataset d = spam::prepare_data(messages, options);
  EXPECT_EQ(d.duplicates, 2u);
  ASSERT_EQ(d.messages.size(), 41u);
  EXPECT_EQ(d.messages.back().id, "42");
  EXPECT_EQ(d.tokens.size(), d.messages.size());
  EXPECT_EQ(d.labels.size(), d.messages.size());
  EXPECT_EQ(d.ids.size(), d.messages.size());
  std::set<std::vector<std::string>> distinct(d.tokens.begin(), d.tokens.end());
  EXPECT_EQ(distinct.size(), d.tokens.size());
  EXPECT_EQ(d.split.train.size() + d.split.dev.size() + d.split.test.size(), d.messages.size());
}

TEST_F(Training, AnExperimentWritesResultsAndAReport) {
  const spam::Dataset data = fixture();
  spam::ExperimentOptions options;
  options.variants = {"sparsemax", "cont-sparsemax-8"};
  options.seeds = {1, 2};
  options.train = small("", "", 2);
  options.out = root_;
  options.command = "test";
  const auto results = spam::run_experiment(data, options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].accuracies.size(), 2u);
  std::ifstream html(root_ / "report.html");
  std::stringstream content;
  content << html.rdbuf();
  EXPECT_THAT(content.str(), HasSubstr("<svg"));
  EXPECT_THAT(content.str(), HasSubstr("cont-sparsemax-8"));
  EXPECT_THAT(content.str(), HasSubstr("</html>"));
  EXPECT_TRUE(fs::exists(root_ / "results.json"));
  EXPECT_TRUE(fs::exists(root_ / "results.md"));
}

}  // namespace
