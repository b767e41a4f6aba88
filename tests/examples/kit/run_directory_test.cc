// kit/run_directory.h: state.json round trip, the resume checks' messages, stale checkpoint
// removal and a damaged directory named: every truncation and corruption of state.json is
// kit::DamagedFile, one line naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "kit/fingerprint.h"
#include "kit/run_directory.h"
#include "damaged_files.h"
#include "test_files.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using RunDirectoryTest = sparcon_test::TempDirTest;

kit::RunState two_epochs() {
  kit::RunState s;
  s.options = {{"hidden", 8}, {"epochs", 2}};
  s.data = {{"documents", 40}};
  s.history = {{1, 0.75, 0.5, 1.25}, {2, 0.1 + 0.2, 2.0 / 3.0, 2.5}};  // values that need 17 digits
  s.best_epoch = 2;
  s.best_score = 2.0 / 3.0;
  s.checkpoint = {{"model", "model-2.pt"}, {"optimizer", "optimizer-2.pt"}, {"best", "best-2.pt"}};
  return s;
}

TEST_F(RunDirectoryTest, StateRoundTripsExactlyUnderTheScoreName) {
  const kit::RunDirectory dir(dir_, "dev_bleu");
  EXPECT_FALSE(dir.has_state());
  const kit::RunState s = two_epochs();
  dir.write(s);
  EXPECT_TRUE(dir.has_state());
  const auto json = nlohmann::json::parse(sparcon_test::read(dir_ / "state.json"));
  EXPECT_EQ(json["best_dev_bleu"], 2.0 / 3.0);
  EXPECT_EQ(json["history"][1]["dev_bleu"], 2.0 / 3.0);
  const kit::RunState back = dir.read();
  EXPECT_EQ(back.options, s.options);
  EXPECT_EQ(back.data, s.data);
  ASSERT_EQ(back.history.size(), 2u);
  EXPECT_EQ(back.history[1].epoch, 2u);
  EXPECT_EQ(back.history[1].train_loss, 0.1 + 0.2);  // bit for bit
  EXPECT_EQ(back.history[1].dev_score, 2.0 / 3.0);
  EXPECT_EQ(back.history[1].seconds, 2.5);
  EXPECT_EQ(back.best_epoch, 2u);
  EXPECT_EQ(back.best_score, 2.0 / 3.0);
  EXPECT_EQ(dir.checkpoint_file(back, "best"), dir_ / "best-2.pt");
  try {
    (void)dir.checkpoint_file(back, "ema");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("state.json"));
    EXPECT_THAT(e.what(), HasSubstr("'ema'"));
  }
}

TEST_F(RunDirectoryTest, WritingRemovesUnnamedCheckpointsAndTemporaryFilesOnly) {
  for (const char* name : {"model-1.pt", "optimizer-1.pt", "best-1.pt", "model-2.pt", "optimizer-2.pt", "best-2.pt",
                           "model-3.pt", "state.json.tmp.77", "vocabulary.txt", "notes.pt"})
    std::ofstream(dir_ / name) << "x";
  kit::RunDirectory(dir_).write(two_epochs());
  EXPECT_THAT(sparcon_test::entries(dir_), ElementsAre("best-2.pt", "model-2.pt", "notes.pt", "optimizer-2.pt",
                                                       "state.json", "vocabulary.txt"));
}

TEST_F(RunDirectoryTest, CheckSameNamesTheKeyAndBothValuesAndSkipsWhatMayDiffer) {
  const kit::RunDirectory dir(dir_);
  const nlohmann::json stored{{"hidden", 8}, {"epochs", 2}};
  EXPECT_NO_THROW(dir.check_same("option", stored, {{"hidden", 8}, {"epochs", 5}}, {"epochs"}));
  try {
    dir.check_same("option", stored, {{"hidden", 16}, {"epochs", 2}});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("option hidden = 8"));
    EXPECT_THAT(e.what(), HasSubstr("hidden = 16"));
    EXPECT_THAT(e.what(), HasSubstr(dir_.string()));
  }
  EXPECT_THROW(dir.check_same("data", stored, {{"max_length", 5}}), std::runtime_error);  // absent: "(none)"
}

TEST_F(RunDirectoryTest, ADamagedStateNamesTheFile) {
  const kit::RunDirectory dir(dir_);
  std::ofstream(dir_ / "state.json") << "{ not json";
  try {
    (void)dir.read();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("state.json"));
    EXPECT_THAT(e.what(), HasSubstr("damaged"));
  }
  std::ofstream(dir_ / "state.json", std::ios::trunc) << R"({"options": {}})";
  EXPECT_THROW((void)dir.read(), std::runtime_error);
}

TEST_F(RunDirectoryTest, EveryDamageOfStateJsonIsOneLineNamingIt) {
  const kit::RunDirectory dir(dir_);
  dir.write(two_epochs());
  const std::filesystem::path file = dir.state_file();
  const std::string good = sparcon_test::read(file);
  for (const sparcon_test::Damage& damage : sparcon_test::damages(good)) {
    if (damage.remove) continue;  // no state.json: no run (has_state), tested above
    sparcon_test::apply(damage, file);
    EXPECT_TRUE(sparcon_test::reports_damaged([&] { (void)dir.read(); }, file)) << damage.name;
  }
  // Valid JSON with entries of the wrong kind.
  for (const char* bad : {R"("options": 3)", R"("checkpoint": ["model-2.pt"])", R"("checkpoint": {"model": 7})",
                          R"("checkpoint": {"model": "../../etc/passwd"})", R"("best_epoch": 9)",
                          R"("history": [{"epoch": "one"}])", R"("best_dev_accuracy": null)"}) {
    nlohmann::json json = nlohmann::json::parse(good);
    const nlohmann::json patch = nlohmann::json::parse(std::string("{") + bad + "}");
    for (const auto& [key, value] : patch.items()) json[key] = value;
    sparcon_test::restore(file, json.dump(2));
    EXPECT_TRUE(sparcon_test::reports_damaged([&] { (void)dir.read(); }, file)) << bad;
  }
  sparcon_test::restore(file, good);
  EXPECT_EQ(dir.read().history.size(), 2u);
}

TEST(Fingerprint, Fnv1aOfKnownStringsAndIncremental) {
  // Published FNV-1a 64 test vectors: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c.
  EXPECT_EQ(kit::Fnv1a().value(), 0xcbf29ce484222325ull);
  EXPECT_EQ(kit::Fnv1a().add("a").value(), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(kit::Fnv1a().add("foo").add("bar").value(), kit::Fnv1a().add("foobar").value());
  // Another basis: one step of the recurrence by hand, (basis xor 'a') * 1099511628211 mod 2^64.
  EXPECT_EQ(kit::Fnv1a(1469598103934665603ull).add("a").value(), (1469598103934665603ull ^ 0x61u) * 1099511628211ull);
}

}  // namespace
