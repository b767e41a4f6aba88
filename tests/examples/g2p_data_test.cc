// The data of the grapheme-to-phoneme experiment (issue 14) on a small dictionary written here:
// parsing (comments, alternates, apostrophes, stress marks, dropped words, malformed lines), the
// vocabularies, the split by word, edit distance, PER and WER; and, when scripts/fetch_data.sh
// has filled the cache, the counts of the real CMUdict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dictionary.h"
#include "kit/split.h"
#include "metrics.h"
#include "test_files.h"
#include "vocabulary.h"
#include "word_split.h"

namespace {

namespace fs = std::filesystem;
using g2p::Phonemes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Comments, a blank line, alternates (one out of order), apostrophes (inside and leading),
// stress marks, words that are dropped (with a dot, a hyphen, a digit) with an alternate, a
// pronunciation identical to an earlier one after stress removal, tabs and a "\r\n" line end.
constexpr const char* kFixture =
    ";;; # CMUdict fixture\n"                         // 1
    ";;; two comment lines\n"                         // 2
    "A  AH0\n"                                        // 3
    "A(1)  EY1\n"                                     // 4
    "A'S  EY1 Z\n"                                    // 5
    "A.  EY1\n"                                       // 6  dropped
    "AD-HOC  AE0 D HH AA1 K\n"                        // 7  dropped
    "AD-HOC(1)  AE1 D HH AA1 K\n"                     // 8  dropped
    "\n"                                              // 9  blank
    "READ  R EH1 D\n"                                 // 10
    "READ(1)  R IY1 D\n"                              // 11
    "'BOUT  B AW1 T\n"                                // 12
    "PRESENT  P R EH1 Z AH0 N T\n"                    // 13
    "PRESENT(1)  P R IY0 Z EH1 N T\n"                 // 14
    "PRESENT(2)  P R EH2 Z AH0 N T\n"                 // 15 = line 13 without stress
    "A42128  EY1 F AO1 R\n"                           // 16 dropped
    "DON'T\tD OW1 N T\r\n"                            // 17 tab, CRLF
    "A(2)  AA1\n";                                    // 18 alternate of A, after other words

g2p::Dictionary parse(const std::string& text, g2p::ParseOptions options = {}) {
  std::istringstream in(text);
  return g2p::parse_dictionary(in, "fixture.txt", options);
}

Phonemes ph(const std::string& text) {
  Phonemes out;
  std::istringstream in(text);
  for (std::string p; in >> p;) out.push_back(p);
  return out;
}

TEST(G2pDictionary, GroupsAlternatesSkipsCommentsAndDropsOtherWords) {
  const auto d = parse(kFixture);
  ASSERT_EQ(d.entries.size(), 6u);
  EXPECT_EQ(d.entries[0].word, "A");
  EXPECT_THAT(d.entries[0].pronunciations, ElementsAre(ph("AH"), ph("EY"), ph("AA")));
  EXPECT_EQ(d.entries[1].word, "A'S");
  EXPECT_THAT(d.entries[1].pronunciations, ElementsAre(ph("EY Z")));
  EXPECT_EQ(d.entries[2].word, "READ");
  EXPECT_THAT(d.entries[2].pronunciations, ElementsAre(ph("R EH D"), ph("R IY D")));
  EXPECT_EQ(d.entries[3].word, "'BOUT");
  EXPECT_EQ(d.entries[4].word, "PRESENT");
  EXPECT_THAT(d.entries[4].pronunciations, ElementsAre(ph("P R EH Z AH N T"), ph("P R IY Z EH N T")));
  EXPECT_EQ(d.entries[5].word, "DON'T");
  EXPECT_THAT(d.entries[5].pronunciations, ElementsAre(ph("D OW N T")));

  const auto& c = d.counts;
  EXPECT_EQ(c.lines, 18u);
  EXPECT_EQ(c.comment_lines, 2u);
  EXPECT_EQ(c.blank_lines, 1u);
  EXPECT_EQ(c.pronunciation_lines, 15u);
  EXPECT_EQ(c.alternate_lines, 6u);         // A(1) AD-HOC(1) READ(1) PRESENT(1) PRESENT(2) A(2)
  EXPECT_EQ(c.words_with_alternates, 4u);   // A AD-HOC READ PRESENT
  EXPECT_EQ(c.kept_words, 6u);
  EXPECT_EQ(c.kept_pronunciations, 10u);
  EXPECT_EQ(c.merged_pronunciations, 1u);   // PRESENT(2)
  EXPECT_EQ(c.dropped_words, 3u);           // A. AD-HOC A42128
  EXPECT_EQ(c.dropped_lines, 4u);
  EXPECT_EQ(c.pronunciation_lines, c.kept_pronunciations + c.merged_pronunciations + c.dropped_lines);
}

TEST(G2pDictionary, KeepsStressMarksWithTheOption) {
  const auto d = parse(kFixture, {.keep_stress = true});
  ASSERT_EQ(d.entries.size(), 6u);
  EXPECT_THAT(d.entries[0].pronunciations, ElementsAre(ph("AH0"), ph("EY1"), ph("AA1")));
  // With stress, PRESENT(2) differs from PRESENT: nothing merged.
  EXPECT_THAT(d.entries[4].pronunciations,
              ElementsAre(ph("P R EH1 Z AH0 N T"), ph("P R IY0 Z EH1 N T"), ph("P R EH2 Z AH0 N T")));
  EXPECT_EQ(d.counts.merged_pronunciations, 0u);
  EXPECT_EQ(d.counts.kept_pronunciations, 11u);
}

TEST(G2pDictionary, StripStressAndIsWord) {
  EXPECT_EQ(g2p::strip_stress("AH0"), "AH");
  EXPECT_EQ(g2p::strip_stress("EY2"), "EY");
  EXPECT_EQ(g2p::strip_stress("HH"), "HH");
  EXPECT_TRUE(g2p::is_word("DON'T"));
  EXPECT_TRUE(g2p::is_word("'BOUT"));
  EXPECT_TRUE(g2p::is_word("abc"));
  EXPECT_FALSE(g2p::is_word(""));
  EXPECT_FALSE(g2p::is_word("'"));
  EXPECT_FALSE(g2p::is_word("A."));
  EXPECT_FALSE(g2p::is_word("AD-HOC"));
  EXPECT_FALSE(g2p::is_word("A42128"));
  EXPECT_FALSE(g2p::is_word("AIR_FORCE"));
}

// Each malformed line, put after two good lines, fails with the file, its line number (3) and
// the line's text.
TEST(G2pDictionary, MalformedLinesNameTheFileLineAndValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"HELLO", "has no phonemes"},
      {"HELLO   ", "has no phonemes"},
      {"(1)  AH0", "empty word"},
      {"HELLO(  HH AH0", "malformed alternate suffix"},
      {"HELLO(x)  HH AH0", "malformed alternate suffix"},
      {"HELLO()  HH AH0", "malformed alternate suffix"},
      {"HELLO(1  HH AH0", "malformed alternate suffix"},
      {"HELLO  HH ah0", "malformed phoneme `ah0`"},
      {"HELLO  HH AH7", "malformed phoneme `AH7`"},
      {"HELLO  HH 0", "malformed phoneme `0`"},
      {"HELLO  HH AH01", "malformed phoneme `AH01`"},
  };
  for (const auto& [line, what] : cases) {
    SCOPED_TRACE(line);
    try {
      parse(";;; comment\nA  AH0\n" + line + "\nB  B IY1\n");
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("fixture.txt:3: "));
      EXPECT_THAT(e.what(), HasSubstr(what));
      EXPECT_THAT(e.what(), HasSubstr("`" + line + "`"));
    }
  }
}

TEST(G2pDictionary, EmptyInputHasNoEntries) {
  const auto d = parse("");
  EXPECT_TRUE(d.entries.empty());
  EXPECT_EQ(d.counts.lines, 0u);
}

class G2pFiles : public sparcon_test::TempDirTest {};

TEST_F(G2pFiles, LoadsAFileAndNamesItInErrors) {
  std::ofstream(dir_ / "dict.txt") << kFixture;
  EXPECT_EQ(g2p::load_dictionary(dir_ / "dict.txt").entries.size(), 6u);
  std::ofstream(dir_ / "bad.txt") << "A  AH0\nB\n";
  try {
    g2p::load_dictionary(dir_ / "bad.txt");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir_ / "bad.txt").string() + ":2: word `B` has no phonemes: `B`"));
  }
}

TEST_F(G2pFiles, AMissingCacheNamesTheFetchCommand) {
  try {
    g2p::load_dictionary(dir_ / "missing.txt");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.txt"));
    EXPECT_THAT(e.what(), HasSubstr("bash scripts/fetch_data.sh"));
  }
  const fs::path cache = dir_ / "cmudict";
  fs::create_directories(cache / "package" / "data");
  std::ofstream(cache / "package" / "data" / "dict.txt") << kFixture;
  try {
    g2p::dictionary_file(cache);  // no COMPLETE marker yet
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(cache.string()));
    EXPECT_THAT(e.what(), HasSubstr("bash scripts/fetch_data.sh"));
  }
  std::ofstream(cache / "COMPLETE") << "sha1 18\n";
  EXPECT_EQ(g2p::dictionary_file(cache), cache / "package" / "data" / "dict.txt");
  fs::remove(cache / "package" / "data" / "dict.txt");
  EXPECT_THROW(g2p::dictionary_file(cache), std::runtime_error);
}

TEST(G2pVocabulary, LettersAndPhonemesAfterTheSpecials) {
  const auto d = parse(kFixture);
  const auto letters = g2p::letter_vocabulary(d.entries);
  EXPECT_THAT(letters.symbols(), ElementsAre("<pad>", "<unk>", "'", "A", "B", "D", "E", "N", "O", "P", "R",
                                             "S", "T", "U"));
  EXPECT_EQ(letters.special_count(), 2u);
  EXPECT_THAT(g2p::encode_word(letters, "DON'T"), ElementsAre(5, 8, 7, 2, 12));
  EXPECT_THAT(g2p::encode_word(letters, "DOX"), ElementsAre(5, 8, g2p::kLetterUnknown));

  const auto phonemes = g2p::phoneme_vocabulary(d.entries);
  EXPECT_EQ(phonemes.symbol(g2p::kPhonemePad), "<pad>");
  EXPECT_EQ(phonemes.symbol(g2p::kPhonemeStart), "<s>");
  EXPECT_EQ(phonemes.symbol(g2p::kPhonemeEnd), "</s>");
  EXPECT_THAT(phonemes.symbols(), ElementsAre("<pad>", "<s>", "</s>", "AA", "AH", "AW", "B", "D", "EH", "EY",
                                              "IY", "N", "OW", "P", "R", "T", "Z"));
  const auto ids = g2p::encode_phonemes(phonemes, ph("R EH D"));
  EXPECT_THAT(ids, ElementsAre(14, 8, 7));
  EXPECT_EQ(g2p::decode_phonemes(phonemes, ids), ph("R EH D"));
  // A decoder's raw output: start, phonemes, end, then anything.
  EXPECT_EQ(g2p::decode_phonemes(phonemes, {1, 14, 8, 7, 2, 9, 9}), ph("R EH D"));
  EXPECT_EQ(g2p::decode_phonemes(phonemes, {14, 0, 8}), ph("R EH"));
  EXPECT_THROW(g2p::decode_phonemes(phonemes, {17}), std::out_of_range);
  try {
    g2p::encode_phonemes(phonemes, ph("R XX"));
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("`XX`"));
  }
  // With stress the phoneme symbols differ, and so does the fingerprint.
  const auto stressed = g2p::phoneme_vocabulary(parse(kFixture, {.keep_stress = true}).entries);
  EXPECT_TRUE(stressed.contains("AH0"));
  EXPECT_FALSE(stressed.contains("AH"));
  EXPECT_NE(stressed.fingerprint(), phonemes.fingerprint());
  EXPECT_EQ(g2p::phoneme_vocabulary(d.entries).fingerprint(), phonemes.fingerprint());
  EXPECT_THROW(g2p::Vocabulary({"<pad>"}, {"<pad>"}), std::invalid_argument);
  EXPECT_THROW(g2p::Vocabulary({"<pad>"}, {""}), std::invalid_argument);
}

// n words "W<i>" with 1 to 3 pronunciations each.
std::vector<g2p::Entry> generated(std::size_t n) {
  std::vector<g2p::Entry> entries;
  for (std::size_t i = 0; i < n; ++i) {
    g2p::Entry e{std::string("W").append(std::to_string(i)), {}};  // not "W" + ...: GCC 12's false -Wrestrict
    for (std::size_t k = 0; k <= i % 3; ++k) e.pronunciations.push_back({std::string("P").append(std::to_string(k))});
    entries.push_back(e);
  }
  return entries;
}

std::set<std::string> words_of(const std::vector<g2p::Entry>& entries, const std::vector<std::size_t>& part) {
  std::set<std::string> words;
  for (const auto& e : g2p::select(entries, part)) words.insert(e.word);
  return words;
}

TEST(G2pSplit, ReproducibleDisjointByWordWithTheStatedSizes) {
  const auto entries = generated(1000);
  const auto s = g2p::split_words(entries);  // 0.90 / 0.05 / 0.05, seed 1
  EXPECT_EQ(s.train.size(), 900u);
  EXPECT_EQ(s.dev.size(), 50u);
  EXPECT_EQ(s.test.size(), 50u);
  // Disjoint and covering, ascending; words (with all their pronunciations) in one part only.
  std::vector<std::size_t> all;
  for (const auto* part : {&s.train, &s.dev, &s.test}) {
    EXPECT_TRUE(std::is_sorted(part->begin(), part->end()));
    all.insert(all.end(), part->begin(), part->end());
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i);
  const auto train = words_of(entries, s.train), dev = words_of(entries, s.dev), test = words_of(entries, s.test);
  EXPECT_EQ(train.size() + dev.size() + test.size(), 1000u);
  for (const auto& w : test) EXPECT_TRUE(!train.count(w) && !dev.count(w)) << w;
  for (const auto& w : dev) EXPECT_FALSE(train.count(w)) << w;
  EXPECT_EQ(g2p::select(entries, s.test)[0].pronunciations, entries[s.test[0]].pronunciations);

  // The same seed, the same split; another seed, another one.
  const auto again = g2p::split_words(entries);
  EXPECT_EQ(again.train, s.train);
  EXPECT_EQ(again.dev, s.dev);
  EXPECT_EQ(again.test, s.test);
  EXPECT_EQ(g2p::split_fingerprint(entries, again), g2p::split_fingerprint(entries, s));
  const auto other = g2p::split_words(entries, {.seed = 2});
  EXPECT_NE(other.test, s.test);
  EXPECT_NE(g2p::split_fingerprint(entries, other), g2p::split_fingerprint(entries, s));

  // It is the kit's split with one label.
  const auto kit_split = kit::stratified_split(std::vector<int>(1000, 0), 0.05, 0.05, 1);
  EXPECT_EQ(kit_split.test, s.test);
  EXPECT_EQ(kit_split.dev, s.dev);

  // Other fractions: round(fraction * n).
  const auto wide = g2p::split_words(entries, {.dev_fraction = 0.1, .test_fraction = 0.2, .seed = 7});
  EXPECT_EQ(wide.train.size(), 700u);
  EXPECT_EQ(wide.dev.size(), 100u);
  EXPECT_EQ(wide.test.size(), 200u);
  EXPECT_THROW(g2p::split_words(entries, {.dev_fraction = 0.5, .test_fraction = 0.5}), std::invalid_argument);
  EXPECT_THROW(g2p::split_words(entries, {.dev_fraction = -0.1}), std::invalid_argument);
  EXPECT_THROW(g2p::select(entries, {1000}), std::out_of_range);
}

TEST(G2pSplit, TheSameWithAndWithoutStress) {
  const auto plain = parse(kFixture), stressed = parse(kFixture, {.keep_stress = true});
  const g2p::SplitOptions options{.dev_fraction = 0.2, .test_fraction = 0.2, .seed = 3};
  EXPECT_EQ(g2p::split_fingerprint(plain.entries, g2p::split_words(plain.entries, options)),
            g2p::split_fingerprint(stressed.entries, g2p::split_words(stressed.entries, options)));
}

TEST(G2pMetrics, EditDistanceOnHandMadeCases) {
  EXPECT_EQ(g2p::edit_distance(ph(""), ph("")), 0u);
  EXPECT_EQ(g2p::edit_distance(ph("K AE T"), ph("")), 3u);
  EXPECT_EQ(g2p::edit_distance(ph(""), ph("K AE T")), 3u);
  EXPECT_EQ(g2p::edit_distance(ph("K AE T"), ph("K AE T")), 0u);
  EXPECT_EQ(g2p::edit_distance(ph("K AE T"), ph("K AH T")), 1u);        // substitution
  EXPECT_EQ(g2p::edit_distance(ph("K AE T"), ph("K AE T S")), 1u);      // insertion
  EXPECT_EQ(g2p::edit_distance(ph("K AE T S"), ph("K AE T")), 1u);      // deletion
  EXPECT_EQ(g2p::edit_distance(ph("K AE T"), ph("T AE K")), 2u);
  EXPECT_EQ(g2p::edit_distance(ph("AH B"), ph("B AH")), 2u);            // no transpositions
  // kitten -> sitting as letters: 3.
  EXPECT_EQ(g2p::edit_distance(ph("k i t t e n"), ph("s i t t i n g")), 3u);
  // Symbols compare whole: AH and AH0 differ, "AH" is not two letters.
  EXPECT_EQ(g2p::edit_distance(ph("AH"), ph("AH0")), 1u);
  EXPECT_EQ(g2p::edit_distance(std::vector<int>{1, 2, 3}, std::vector<int>{1, 3}), 1u);
}

std::size_t slow_distance(const Phonemes& a, std::size_t i, const Phonemes& b, std::size_t j) {
  if (i == a.size()) return b.size() - j;
  if (j == b.size()) return a.size() - i;
  return std::min({slow_distance(a, i + 1, b, j) + 1, slow_distance(a, i, b, j + 1) + 1,
                   slow_distance(a, i + 1, b, j + 1) + (a[i] == b[j] ? 0 : 1)});
}

TEST(G2pMetrics, EditDistanceMatchesASlowRecursiveReference) {
  std::mt19937_64 rng(14);
  const std::vector<std::string> alphabet = {"AA", "B", "K"};
  const auto draw = [&] {
    Phonemes s(kit::uniform_below(rng, 6));
    for (auto& p : s) p = alphabet[kit::uniform_below(rng, alphabet.size())];
    return s;
  };
  for (int trial = 0; trial < 400; ++trial) {
    const auto a = draw(), b = draw();
    ASSERT_EQ(g2p::edit_distance(a, b), slow_distance(a, 0, b, 0)) << ::testing::PrintToString(a) << " "
                                                                     << ::testing::PrintToString(b);
    ASSERT_EQ(g2p::edit_distance(a, b), g2p::edit_distance(b, a));
  }
}

TEST(G2pMetrics, AWordScoresAgainstItsClosestReference) {
  const std::vector<Phonemes> read = {ph("R EH D"), ph("R IY D")};
  auto s = g2p::score_word(ph("R IY D"), read);  // equals the second reference
  EXPECT_TRUE(s.correct);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.closest, 1u);
  EXPECT_EQ(s.reference_length, 3u);

  // Closest is the longer reference: its length is the denominator.
  const std::vector<Phonemes> refs = {ph("P R EH Z AH N T"), ph("P R Z N")};
  s = g2p::score_word(ph("P R EH Z AH N"), refs);  // 1 from the first, 2 from the second
  EXPECT_FALSE(s.correct);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.closest, 0u);
  EXPECT_EQ(s.reference_length, 7u);
  s = g2p::score_word(ph("P R Z"), refs);  // 4 from the first, 1 from the second
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.closest, 1u);
  EXPECT_EQ(s.reference_length, 4u);
  // A tie goes to the first reference at the minimum.
  s = g2p::score_word(ph("A"), {ph("B C"), ph("D E")});
  EXPECT_EQ(s.errors, 2u);
  EXPECT_EQ(s.closest, 0u);
  s = g2p::score_word(ph(""), {ph("B C D"), ph("D E")});  // an empty output: all deletions
  EXPECT_EQ(s.errors, 2u);
  EXPECT_EQ(s.reference_length, 2u);

  EXPECT_THROW(g2p::score_word(ph("A"), {}), std::invalid_argument);
  EXPECT_THROW(g2p::score_word(ph("A"), {ph("A"), ph("")}), std::invalid_argument);
}

TEST(G2pMetrics, PerAndWerOverWordsWithSeveralReferences) {
  const std::vector<std::vector<Phonemes>> references = {
      {ph("R EH D"), ph("R IY D")},                    // READ
      {ph("P R EH Z AH N T"), ph("P R IY Z EH N T")},  // PRESENT
      {ph("AH"), ph("EY")},                            // A
      {ph("D OW N T")},                                // DON'T
  };
  const std::vector<Phonemes> outputs = {
      ph("R IY D"),         // right (second reference): 0 errors of 3
      ph("P R IY Z AH N T"),  // 1 from both; the first (7) counts: 1 of 7
      ph("EY"),             // right: 0 of 1
      ph("D AO N"),         // 2 of 4
  };
  const auto r = g2p::error_rates(outputs, references);
  EXPECT_EQ(r.words, 4u);
  EXPECT_EQ(r.wrong_words, 2u);
  EXPECT_EQ(r.phoneme_errors, 3u);
  EXPECT_EQ(r.reference_phonemes, 3u + 7u + 1u + 4u);
  EXPECT_DOUBLE_EQ(r.per(), 3.0 / 15.0);
  EXPECT_DOUBLE_EQ(r.wer(), 0.5);

  g2p::ErrorRates by_hand;
  for (std::size_t i = 0; i < outputs.size(); ++i) by_hand.add(g2p::score_word(outputs[i], references[i]));
  EXPECT_EQ(by_hand.phoneme_errors, r.phoneme_errors);
  EXPECT_EQ(by_hand.reference_phonemes, r.reference_phonemes);

  // All right: 0 and 0; nothing scored: NaN.
  const auto perfect = g2p::error_rates({ph("AH"), ph("D OW N T")}, {references[2], references[3]});
  EXPECT_EQ(perfect.per(), 0.0);
  EXPECT_EQ(perfect.wer(), 0.0);
  EXPECT_TRUE(std::isnan(g2p::ErrorRates{}.per()));
  EXPECT_TRUE(std::isnan(g2p::ErrorRates{}.wer()));

  try {
    g2p::error_rates(outputs, {references[0]});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("4 outputs but 1 reference lists"));
  }
  try {
    g2p::error_rates({ph("A"), ph("B")}, {{ph("A")}, {}});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("word 1"));
  }
}

// The real CMUdict 0.2.3 from the cache of scripts/fetch_data.sh; skipped without it.
TEST(G2pRealDictionary, CountsOfCmudict) {
  const fs::path cache = SPARCON_G2P_CACHE;
  if (!fs::exists(cache / "COMPLETE")) GTEST_SKIP() << "no " << cache << ": run `bash scripts/fetch_data.sh`";
  const auto d = g2p::load_dictionary(g2p::dictionary_file(cache));
  const auto& c = d.counts;
  EXPECT_EQ(c.lines, 133784u);
  EXPECT_EQ(c.comment_lines, 0u);
  EXPECT_EQ(c.blank_lines, 0u);
  EXPECT_EQ(c.pronunciation_lines, 133784u);
  EXPECT_EQ(c.alternate_lines, 8779u);        // WORD(1): 8,153 (the issue's count), WORD(2): 482, WORD(3): 144
  EXPECT_EQ(c.words_with_alternates, 8153u);  // every word with an alternate has a WORD(1)
  EXPECT_EQ(c.kept_words, 123874u);
  EXPECT_EQ(c.dropped_words, 1131u);
  EXPECT_EQ(c.dropped_lines, 1199u);
  EXPECT_EQ(c.kept_pronunciations, 132271u);
  EXPECT_EQ(c.merged_pronunciations, 314u);  // alternates that differ from another only in stress
  EXPECT_EQ(c.kept_pronunciations + c.merged_pronunciations, 133784u - 1199u);

  const auto phonemes = g2p::phoneme_vocabulary(d.entries);
  EXPECT_EQ(phonemes.size(), 3u + 39u);
  const auto letters = g2p::letter_vocabulary(d.entries);
  EXPECT_EQ(letters.size(), 2u + 27u);  // A-Z and the apostrophe

  const auto stressed = g2p::load_dictionary(g2p::dictionary_file(cache), {.keep_stress = true});
  EXPECT_EQ(stressed.counts.merged_pronunciations, 0u);
  EXPECT_EQ(stressed.counts.kept_pronunciations, 133784u - 1199u);
  EXPECT_EQ(g2p::phoneme_vocabulary(stressed.entries).size(), 3u + 69u);

  const auto s = g2p::split_words(d.entries);
  EXPECT_EQ(s.train.size(), 111486u);
  EXPECT_EQ(s.dev.size(), 6194u);
  EXPECT_EQ(s.test.size(), 6194u);
  const auto pronunciations = [&](const std::vector<std::size_t>& part) {
    std::size_t n = 0;
    for (const auto i : part) n += d.entries[i].pronunciations.size();
    return n;
  };
  EXPECT_EQ(pronunciations(s.train), 119029u);
  EXPECT_EQ(pronunciations(s.dev), 6595u);
  EXPECT_EQ(pronunciations(s.test), 6647u);
  std::cout << "[ split    ] words train/dev/test " << s.train.size() << "/" << s.dev.size() << "/" << s.test.size()
            << ", pronunciations " << pronunciations(s.train) << "/" << pronunciations(s.dev) << "/"
            << pronunciations(s.test) << ", fingerprint " << g2p::split_fingerprint(d.entries, s) << "\n";
}

}  // namespace
