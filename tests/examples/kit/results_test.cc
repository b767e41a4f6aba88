// kit/seed_series.h, kit/format.h and kit/results_files.h: statistics over seeds against
// hand-computed values, and the two results files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "kit/format.h"
#include "kit/results_files.h"
#include "kit/run_info.h"
#include "kit/seed_series.h"
#include "test_files.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ResultsFiles = sparcon_test::TempDirTest;

TEST(SeedSeries, MeanAndSampleSdAgainstHandComputedValues) {
  // {0.91, 0.93, 0.95}: mean 0.93, sd sqrt((0.02^2 + 0 + 0.02^2) / 2) = 0.02.
  const kit::Summary s = kit::summarize({0.91, 0.93, 0.95});
  EXPECT_NEAR(s.mean, 0.93, 1e-15);
  EXPECT_NEAR(s.sd, 0.02, 1e-15);
  EXPECT_TRUE(std::isnan(kit::summarize({0.5}).sd));
  EXPECT_EQ(kit::summarize({0.5}).mean, 0.5);
  EXPECT_TRUE(std::isnan(kit::summarize({}).mean));
}

TEST(SeedSeries, JsonHasEverySeedAndNullForWhatDoesNotExist) {
  const nlohmann::json j = kit::series_json({1.0, 3.0});
  EXPECT_EQ(j["per_seed"], nlohmann::json::array({1.0, 3.0}));
  EXPECT_EQ(j["mean"], 2.0);
  EXPECT_NEAR(j["sd"].get<double>(), std::sqrt(2.0), 1e-15);
  EXPECT_TRUE(kit::series_json({1.0})["sd"].is_null());
  EXPECT_TRUE(kit::series_json({})["mean"].is_null());
  EXPECT_TRUE(kit::series_json({std::nan("")})["per_seed"][0].is_null());
}

TEST(SeedSeries, MeanSdTextScalesAndSaysWhatIsMissing) {
  EXPECT_EQ(kit::mean_sd_text({0.91, 0.93, 0.95}, 100, 2), "93.00 ± 2.00");
  EXPECT_EQ(kit::mean_sd_text({0.925}, 100, 1), "92.5 ± n/a");
  EXPECT_EQ(kit::mean_sd_text({}, 100, 1), "n/a");
  EXPECT_EQ(kit::fixed(2.0 / 3.0, 3), "0.667");
  EXPECT_EQ(kit::fixed(INFINITY, 3), "n/a");
}

TEST_F(ResultsFiles, JsonAndMarkdownWithHeadingAndRunList) {
  const nlohmann::json results{{"variants", {1, 2}}};
  kit::write_results(dir_ / "out", "My results", results, {{"date", "2026-01-02"}}, "| a |\n");
  EXPECT_EQ(nlohmann::json::parse(sparcon_test::read(dir_ / "out" / "results.json")), results);
  EXPECT_EQ(sparcon_test::read(dir_ / "out" / "results.md"), "# My results\n\n- date: 2026-01-02\n\n| a |\n");
  EXPECT_THAT(sparcon_test::entries(dir_ / "out"), ElementsAre("results.json", "results.md"));
}

TEST(RunInfo, DateAndCommandLine) {
  EXPECT_THAT(kit::utc_now(), ::testing::MatchesRegex("20[0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9] UTC"));
  const char* argv[] = {"prog", "quick", "--out", "runs/x"};
  EXPECT_EQ(kit::command_line(4, argv), "prog quick --out runs/x");
  EXPECT_EQ(kit::command_line(0, argv), "");
}

}  // namespace
