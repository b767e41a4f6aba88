// The data pipeline of the text-classification experiment on a small corpus made here: header
// stripping, tokenizer, vocabulary, and the errors for a missing or corrupt cache (the split is
// the kit's: tests/examples/kit/split_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "corpus.h"
#include "tokenizer.h"
#include "vocabulary.h"

namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A temporary corpus directory: data/<group>/<id>.json (and a .txt twin, as in the package).
class Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("spam_fixture_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(data());
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path data() const { return root_ / "package" / "data"; }
  void write(const std::string& group, const std::string& id, const std::string& content) {
    fs::create_directories(data() / group);
    std::ofstream(data() / group / (id + ".json")) << content;
    std::ofstream(data() / group / (id + ".txt")) << "raw";
  }
  void message(const std::string& group, const std::string& id, const std::string& text) {
    write(group, id, "{\"id\":\"" + id + "\",\"group\":\"" + group + "\",\"text\":\"" + text + "\"}");
  }
  fs::path root_;
};

TEST(SpamData, StripHeadersKeepsTheBodyAfterTheFirstEmptyLine) {
  EXPECT_EQ(spam::strip_headers("From: a@b\nSubject: win money\n\nHello\n\nthere\n"), "Hello\n\nthere\n");
  EXPECT_EQ(spam::strip_headers("From: a@b\r\nSubject: x\r\n\r\nBody\r\n"), "Body\r\n");
  EXPECT_EQ(spam::strip_headers("Subject: no body at all\n"), "");
  EXPECT_EQ(spam::strip_headers("\nonly body"), "only body");
  EXPECT_EQ(spam::strip_headers(""), "");
}

TEST(SpamData, HeaderBlockIsRecognisedOnlyWhenItIsOne) {
  EXPECT_TRUE(spam::has_header_block("From: a@b.c\nSubject: hi\n\nbody"));
  EXPECT_TRUE(spam::has_header_block("From a@b.c  Mon Jan  1 00:00:00 2002\nTo: x\r\n\r\nbody"));
  EXPECT_TRUE(spam::has_header_block("X-Spam-Flag:\tYES\n\nbody"));
  EXPECT_FALSE(spam::has_header_block("URGENT: claim your prize now\n"));  // no empty line
  EXPECT_FALSE(spam::has_header_block("Hi John: see below\nthanks"));       // a space in the name
  EXPECT_FALSE(spam::has_header_block("plain text\n\nmore"));
  EXPECT_FALSE(spam::has_header_block(""));
}

TEST(SpamData, TokenizerLowercasesSplitsAndDropsLongRuns) {
  EXPECT_THAT(spam::tokenize("Free $$$ at http://x.com/A1!"), ElementsAre("free", "at", "http", "x", "com", "a1"));
  EXPECT_THAT(spam::tokenize("caf\xc3\xa9 don't"), ElementsAre("caf", "don", "t"));
  EXPECT_THAT(spam::tokenize(std::string(21, 'a') + " ok " + std::string(20, 'b')),
              ElementsAre("ok", std::string(20, 'b')));
  EXPECT_TRUE(spam::tokenize(" \n\t--- ").empty());
}

TEST(SpamData, LabelsComeFromTheGroup) {
  EXPECT_EQ(spam::label_of_group("spam-1"), 1);
  EXPECT_EQ(spam::label_of_group("spam-2"), 1);
  EXPECT_EQ(spam::label_of_group("easy-ham-1"), 0);
  EXPECT_EQ(spam::label_of_group("hard-ham-1"), 0);
}

TEST_F(Fixture, LoadsEveryMessageInAFixedOrderWithoutHeaders) {
  message("spam-1", "00002.b", "Subject: buy\\n\\nCheap pills");
  message("easy-ham-1", "00001.a", "Subject: meeting\\nFrom: bob\\n\\nSee you at noon");
  message("spam-1", "00001.c", "Subject: win\\n\\nYou won");
  const auto corpus = spam::load_corpus(data());
  ASSERT_EQ(corpus.size(), 3u);
  EXPECT_EQ(corpus[0].group, "easy-ham-1");
  EXPECT_EQ(corpus[0].label, 0);
  EXPECT_EQ(corpus[0].body, "See you at noon");
  EXPECT_EQ(corpus[1].id, "00001.c");
  EXPECT_EQ(corpus[2].id, "00002.b");
  EXPECT_EQ(corpus[2].label, 1);
  for (const auto& m : corpus) EXPECT_THAT(m.body, ::testing::Not(HasSubstr("Subject")));
}

TEST_F(Fixture, ACorruptFileNamesItselfAndTheFetchCommand) {
  message("spam-1", "00001.a", "Subject: x\\n\\nbody");
  write("spam-2", "00002.b", "{\"id\":\"00002\",\"group\":\"spam-2\",\"te");  // truncated
  try {
    spam::load_corpus(data());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("00002.b.json"));
    EXPECT_THAT(e.what(), HasSubstr("scripts/fetch_data.sh"));
  }
  write("spam-2", "00002.b", "{\"id\":\"00002\",\"group\":\"spam-2\"}");  // no text
  EXPECT_THROW(spam::load_corpus(data()), std::runtime_error);
}

TEST_F(Fixture, AMissingOrIncompleteCacheNamesTheFetchCommand) {
  try {
    spam::corpus_directory(root_);  // no COMPLETE marker
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("scripts/fetch_data.sh"));
  }
  std::ofstream(root_ / "COMPLETE") << "ok";
  EXPECT_EQ(spam::corpus_directory(root_), data());
  EXPECT_THROW(spam::load_corpus(root_ / "nowhere"), std::runtime_error);
  EXPECT_THROW(spam::load_corpus(data()), std::runtime_error);  // empty
  // fetch_data.sh's marker "<sha1> <messages>": a cache that lost messages since is refused.
  message("spam-2", "00001.a", "hello");
  message("easy-ham-1", "00002.b", "there");
  std::ofstream(root_ / "COMPLETE") << "7766aea7 2\n";
  EXPECT_EQ(spam::corpus_directory(root_), data());
  fs::remove(data() / "spam-2" / "00001.a.json");
  try {
    spam::corpus_directory(root_);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds 1 messages"));
    EXPECT_THAT(e.what(), HasSubstr("says 2"));
    EXPECT_THAT(e.what(), HasSubstr("scripts/fetch_data.sh"));
  }
}

TEST(SpamData, VocabularyKeepsFrequentTokensInAFixedOrder) {
  const std::vector<std::vector<std::string>> docs{{"b", "a", "a", "c"}, {"a", "b", "d"}, {"c"}};
  const spam::Vocabulary v(docs, 2, 100);
  EXPECT_THAT(v.tokens(), ElementsAre("<pad>", "<unk>", "a", "b", "c"));
  EXPECT_THAT(v.encode({"a", "d", "c", "b"}, 3), ElementsAre(2, spam::Vocabulary::kUnknown, 4));
  EXPECT_THAT(spam::Vocabulary(docs, 1, 3).tokens(), ElementsAre("<pad>", "<unk>", "a"));
  const spam::Vocabulary restored(v.tokens());
  EXPECT_EQ(restored.encode({"c", "a"}, 10), v.encode({"c", "a"}, 10));
  EXPECT_THROW(spam::Vocabulary(docs, 1, 1), std::invalid_argument);
}

}  // namespace
