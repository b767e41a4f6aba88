// The torch-free parts of the grapheme-to-phoneme experiment beyond the dictionary (issue 14):
// the encoded data set and its seeded subsets, the vocabularies rebuilt from a run's record,
// where the attention looks (letters read per phoneme, monotonicity) on hand-made steps, and the
// HTML report (well-formed, escaped, one heat map per word, density strips for continuous steps).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dataset.h"
#include "html_checker.h"
#include "report.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

g2p::Dictionary small_dictionary(std::size_t words) {
  std::ostringstream text;
  const char* letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (std::size_t i = 0; i < words; ++i) {
    const std::string word = std::string(1, letters[i % 26]) + letters[(i / 26) % 26] + "A";
    text << word << "  B AA" << (i % 3) << " T\n";
    if (i % 4 == 0) text << word << "(1)  P AA1 T\n";
  }
  std::istringstream in(text.str());
  return g2p::parse_dictionary(in, "fixture");
}

TEST(G2pDataset, SubsetsAreSeededSortedAndInsideTheSplit) {
  const std::vector<std::size_t> all{3, 5, 8, 13, 21, 34, 55, 89};
  const auto a = g2p::sample_indices(all, 3, 11), b = g2p::sample_indices(all, 3, 11);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  for (auto i : a) EXPECT_NE(std::find(all.begin(), all.end(), i), all.end());
  // Over many seeds every index is drawn (a shuffle, not a prefix).
  std::set<std::size_t> seen;
  for (std::uint64_t seed = 0; seed < 64; ++seed)
    for (auto i : g2p::sample_indices(all, 2, seed)) seen.insert(i);
  EXPECT_EQ(seen.size(), all.size());
  EXPECT_EQ(g2p::sample_indices(all, 0, 1), all);
  EXPECT_EQ(g2p::sample_indices(all, 100, 1), all);
}

TEST(G2pDataset, TrainingPairsAreEveryPronunciationOfTheTrainingWordsOnly) {
  g2p::DataOptions options;
  options.split.dev_fraction = 0.2;
  options.split.test_fraction = 0.2;
  const g2p::Dataset data = g2p::prepare_data(small_dictionary(40), options);
  ASSERT_EQ(data.entries.size(), 40u);
  EXPECT_EQ(data.split.train.size() + data.split.dev.size() + data.split.test.size(), 40u);
  std::size_t expected_pairs = 0;
  for (auto i : data.split.train) expected_pairs += data.entries[i].pronunciations.size();
  EXPECT_EQ(data.train_pairs.size(), expected_pairs);
  for (const auto& [entry, k] : data.train_pairs) {
    EXPECT_TRUE(std::binary_search(data.split.train.begin(), data.split.train.end(), entry));
    EXPECT_LT(k, data.entries[entry].pronunciations.size());
  }
  // Encodings: a letter per character, a phoneme id per phoneme.
  for (std::size_t i = 0; i < data.entries.size(); ++i) {
    EXPECT_EQ(data.encoded[i].letters.size(), data.entries[i].word.size());
    ASSERT_EQ(data.encoded[i].references.size(), data.entries[i].pronunciations.size());
    for (std::size_t k = 0; k < data.encoded[i].references.size(); ++k)
      EXPECT_EQ(g2p::decode_phonemes(data.phonemes, data.encoded[i].references[k]), data.entries[i].pronunciations[k]);
  }
  // Subsets of the split.
  options.train_subset = 5;
  options.test_subset = 3;
  const g2p::Dataset small = g2p::prepare_data(small_dictionary(40), options);
  EXPECT_EQ(small.split.train.size(), 5u);
  EXPECT_EQ(small.split.test.size(), 3u);
  EXPECT_EQ(small.split.dev, data.split.dev);
  for (auto i : small.split.train) EXPECT_TRUE(std::binary_search(data.split.train.begin(), data.split.train.end(), i));
  for (auto i : small.split.test) EXPECT_TRUE(std::binary_search(data.split.test.begin(), data.split.test.end(), i));
}

TEST(G2pDataset, FingerprintRecordsTheVocabulariesThatPredictRebuilds) {
  const g2p::Dataset data = g2p::prepare_data(small_dictionary(30), {});
  const nlohmann::json f = g2p::data_fingerprint(data);
  EXPECT_EQ(f.at("words"), 30);
  EXPECT_EQ(f.at("train_pairs"), data.train_pairs.size());
  const auto letters = g2p::vocabulary_from_symbols(f.at("letters").get<std::vector<std::string>>(), 2);
  const auto phonemes = g2p::vocabulary_from_symbols(f.at("phonemes").get<std::vector<std::string>>(), 3);
  EXPECT_EQ(letters.symbols(), data.letters.symbols());
  EXPECT_EQ(phonemes.symbols(), data.phonemes.symbols());
  EXPECT_EQ(phonemes.id("T"), data.phonemes.id("T"));
  // A list that is not specials then sorted symbols is refused.
  EXPECT_THROW(g2p::vocabulary_from_symbols({"<pad>", "<unk>", "B", "A"}, 2), std::invalid_argument);
  EXPECT_THROW(g2p::vocabulary_from_symbols({"<pad>"}, 2), std::invalid_argument);
  // Another split seed changes the fingerprint.
  g2p::DataOptions other;
  other.split.seed = 99;
  EXPECT_NE(g2p::data_fingerprint(g2p::prepare_data(small_dictionary(30), other)).at("split_fnv1a"), f.at("split_fnv1a"));
}

g2p::StepAttention discrete(std::vector<double> w) {
  g2p::StepAttention s;
  s.weights = std::move(w);
  return s;
}

g2p::StepAttention density(double mu, double begin = NAN, double end = NAN) {
  g2p::StepAttention s;
  s.mu = mu;
  s.sigma2 = 0.01;
  s.support_begin = begin;
  s.support_end = end;
  return s;
}

TEST(G2pAlignment, LettersReadByDiscreteWeightsAndBySupports) {
  EXPECT_EQ(g2p::attended_letters(discrete({0.5, 0.5, 0, 0}), 4), 2u);
  EXPECT_EQ(g2p::attended_letters(discrete({0.1, 0.2, 0.3, 0.4}), 4), 4u);
  EXPECT_EQ(g2p::centre_letter(discrete({0.1, 0.4, 0.4, 0.1}), 4), 1u);  // the first of the largest
  // Letters of a 4-letter word sit at 0.125, 0.375, 0.625, 0.875.
  EXPECT_EQ(g2p::attended_letters(density(0.5, 0.3, 0.7), 4), 2u);
  EXPECT_EQ(g2p::attended_letters(density(0.5, 0.376, 0.624), 4), 0u);
  EXPECT_EQ(g2p::attended_letters(density(0.5, 0.125, 0.875), 4), 4u);  // the ends are inside
  EXPECT_EQ(g2p::attended_letters(density(0.5), 4), 4u);                // unbounded: all
  EXPECT_EQ(g2p::centre_letter(density(0.5), 4), 2u);                   // cell [0.5, 0.75)
  EXPECT_EQ(g2p::centre_letter(density(0.4999), 4), 1u);
  EXPECT_EQ(g2p::centre_letter(density(-0.2), 4), 0u);                  // clamped
  EXPECT_EQ(g2p::centre_letter(density(1.0), 4), 3u);
  EXPECT_THROW(g2p::attended_letters(discrete({0.5, 0.5}), 3), std::invalid_argument);
  EXPECT_THROW(g2p::attended_letters(g2p::StepAttention{}, 3), std::invalid_argument);
  EXPECT_THROW(g2p::centre_letter(density(0.5), 0), std::invalid_argument);
}

TEST(G2pAlignment, MonotonicityCountsBackwardMovesWithinWordsOnly) {
  g2p::AlignmentStats stats;
  EXPECT_TRUE(std::isnan(stats.monotonicity()));
  EXPECT_TRUE(std::isnan(stats.letters_per_phoneme()));
  // Word 1 (3 letters): centres 0, 1, 1, 0 -> moves +, =, - : 2 of 3 forward; letters read 1, 2, 1, 3.
  stats.add_word({discrete({1, 0, 0}), discrete({0, 0.6, 0.4}), discrete({0, 1, 0}), discrete({0.5, 0.25, 0.25})}, 3);
  // Word 2 (2 letters) starts at letter 0 again: no move is counted across words.
  stats.add_word({density(0.1, 0.0, 0.3), density(0.9)}, 2);
  EXPECT_EQ(stats.steps, 6u);
  EXPECT_EQ(stats.moves, 4u);
  EXPECT_EQ(stats.forward_moves, 3u);
  EXPECT_DOUBLE_EQ(stats.monotonicity(), 0.75);
  EXPECT_EQ(stats.attended, 1u + 2 + 1 + 3 + 1 + 2);
  EXPECT_DOUBLE_EQ(stats.letters_per_phoneme(), 10.0 / 6);
  EXPECT_DOUBLE_EQ(stats.fraction_read(), 10.0 / (4 * 3 + 2 * 2));
}

g2p::WordView view_of(bool continuous) {
  g2p::WordView v;
  v.word = "O'NEIL";
  v.output = {"OW", "N", "IY", "L"};
  v.references = {"OW N IY L", "OW N EY L"};
  v.correct = true;
  v.alignment = {4, 6, std::vector<double>(24, 1.0 / 6)};
  for (std::size_t t = 0; t < 4; ++t) {
    v.steps.push_back(continuous ? density(0.2 * static_cast<double>(t + 1), 0.1, 0.5) : discrete(std::vector<double>(6, 1.0 / 6)));
    if (continuous) v.curves.push_back(std::vector<double>(50, 1.0 + static_cast<double>(t)));
  }
  return v;
}

TEST(G2pReport, WellFormedWithAHeatMapPerWordAndStripsForDensities) {
  const std::vector<g2p::VariantWords> variants{{"sparsemax", {view_of(false)}}, {"cont-sparsemax <&>", {view_of(true)}}};
  const std::string html = g2p::render_report("G2P <report>", "# Results\n\n| a | b |\n|---|---:|\n| x | 1 |\n", variants);
  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_THAT(html, HasSubstr("G2P &lt;report&gt;"));
  EXPECT_THAT(html, HasSubstr("cont-sparsemax &lt;&amp;&gt;"));
  EXPECT_THAT(html, HasSubstr("O&#39;NEIL"));
  EXPECT_THAT(html, HasSubstr("<table class=\"results\">"));
  std::size_t heatmaps = 0, strips = 0, supports = 0;
  for (auto at = html.find("class=\"heatmap\""); at != std::string::npos; at = html.find("class=\"heatmap\"", at + 1)) ++heatmaps;
  for (auto at = html.find("class=\"strips\""); at != std::string::npos; at = html.find("class=\"strips\"", at + 1)) ++strips;
  for (auto at = html.find("class=\"support\""); at != std::string::npos; at = html.find("class=\"support\"", at + 1)) ++supports;
  EXPECT_EQ(heatmaps, 2u);
  EXPECT_EQ(strips, 1u);
  EXPECT_EQ(supports, 4u);  // one per step of the continuous word
}

TEST(G2pReport, MismatchedShapesAreRefusedAndEmptyOutputsNoted) {
  g2p::WordView bad = view_of(false);
  bad.alignment.cols = 5;
  EXPECT_THROW(g2p::render_report("t", "", {{"softmax", {bad}}}), std::invalid_argument);
  g2p::WordView strips = view_of(true);
  strips.curves.pop_back();
  EXPECT_THROW(g2p::density_strips_svg(strips), std::invalid_argument);
  strips = view_of(true);
  strips.curves[1][3] = NAN;
  EXPECT_THROW(g2p::density_strips_svg(strips), std::invalid_argument);
  g2p::WordView empty = view_of(false);
  empty.output.clear();
  empty.steps.clear();
  empty.alignment = {};
  const std::string html = g2p::render_report("t", "", {{"softmax", {empty}}});
  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_THAT(html, HasSubstr("no phoneme was output"));
}

}  // namespace
