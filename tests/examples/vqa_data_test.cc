// The data of the VQA experiment (issue 13), torch-free: gzip and IDX reading on bytes written
// here (gzip by zlib's gzwrite, the IDX headers by hand), damaged and missing files named; the
// class names and groups; the question vocabulary and the answers; and, when Debian's package
// dataset-fashion-mnist is installed, the real files' counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "classes.h"
#include "damaged_files.h"
#include "fashion_mnist.h"
#include "gzip_file.h"
#include "idx.h"
#include "test_files.h"
#include "vocabulary.h"

namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// The IDX bytes of an unsigned-byte array: 00 00 08 <dims>, the sizes big-endian, the data.
std::string idx_bytes(const std::vector<std::uint32_t>& sizes, const std::vector<std::uint8_t>& data) {
  std::string out = {'\0', '\0', '\x08', static_cast<char>(sizes.size())};
  for (const auto n : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(data.begin(), data.end());
  return out;
}

/// Writes bytes gzipped with zlib's own gzip writer.
void write_gzip(const fs::path& file, const std::string& bytes) {
  gzFile out = gzopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
}

/// `call` throws std::runtime_error whose message starts with the file's name and holds `what`.
::testing::AssertionResult fails_naming(const std::function<void()>& call, const fs::path& file, const std::string& what) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    if (m.rfind(file.string(), 0) != 0) return ::testing::AssertionFailure() << "does not start with " << file << ": " << m;
    if (m.find(what) == std::string::npos) return ::testing::AssertionFailure() << "lacks `" << what << "`: " << m;
    return ::testing::AssertionSuccess() << m;
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// A small split: n items, item i all pixels (i * 7) % 256 and label i % 10.
void write_split(const fs::path& folder, vqa::Split split, std::uint32_t n) {
  std::vector<std::uint8_t> pixels, labels;
  for (std::uint32_t i = 0; i < n; ++i) {
    pixels.insert(pixels.end(), 784, static_cast<std::uint8_t>((i * 7) % 256));
    labels.push_back(static_cast<std::uint8_t>(i % 10));
  }
  write_gzip(vqa::images_file(folder, split), idx_bytes({n, 28, 28}, pixels));
  write_gzip(vqa::labels_file(folder, split), idx_bytes({n}, labels));
}

class VqaFiles : public sparcon_test::TempDirTest {};

TEST(VqaIdx, ParsesHandMadeBytes) {
  const auto a = vqa::parse_idx(idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6}), "a");
  EXPECT_THAT(a.sizes, ElementsAre(2u, 3u));
  EXPECT_THAT(a.data, ElementsAre(1, 2, 3, 4, 5, 6));
  const auto b = vqa::parse_idx(idx_bytes({300}, std::vector<std::uint8_t>(300, 9)), "b");  // a size > 255
  EXPECT_THAT(b.sizes, ElementsAre(300u));
  EXPECT_EQ(vqa::idx_magic(1), 2049u);
  EXPECT_EQ(vqa::idx_magic(3), 2051u);
}

TEST(VqaIdx, BadHeadersAndSizesAreNamed) {
  const auto fails = [](const std::string& bytes, const std::string& what) {
    return fails_naming([&] { vqa::parse_idx(bytes, "f.idx"); }, "f.idx", what);
  };
  const std::string good = idx_bytes({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(fails("", "no IDX header"));
  EXPECT_TRUE(fails(good.substr(0, 3), "no IDX header"));
  EXPECT_TRUE(fails("\x01" + good.substr(1), "not an IDX file"));
  std::string other_type = good;
  other_type[2] = '\x0d';  // float
  EXPECT_TRUE(fails(other_type, "data type 13"));
  std::string no_dims = good;
  no_dims[3] = '\0';
  EXPECT_TRUE(fails(no_dims, "0 dimensions"));
  EXPECT_TRUE(fails(good.substr(0, 9), "lacks its sizes"));
  EXPECT_TRUE(fails(good.substr(0, good.size() - 1), "truncated: 3 data bytes, the header announces 4"));
  EXPECT_TRUE(fails(good + "xy", "2 bytes after the data"));
}

TEST_F(VqaFiles, GzipRoundTripAndDamage) {
  std::string bytes;
  for (int i = 0; i < 200000; ++i) bytes.push_back(static_cast<char>((i * 2654435761u) >> 13));  // poorly compressible
  const fs::path file = dir_ / "data.gz";
  write_gzip(file, bytes);
  EXPECT_EQ(vqa::read_gzip(file), bytes);
  const std::string good = sparcon_test::read(file);

  EXPECT_TRUE(fails_naming([&] { vqa::read_gzip(dir_ / "absent.gz"); }, dir_ / "absent.gz", "cannot open"));
  for (const auto& damage : sparcon_test::damages(good)) {
    if (damage.remove) continue;
    SCOPED_TRACE(damage.name);
    sparcon_test::apply(damage, file);
    try {
      const std::string out = vqa::read_gzip(file);
      ADD_FAILURE() << "read " << out.size() << " bytes";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(file.string(), 0), 0u) << m;
      EXPECT_TRUE(m.find("truncated") != std::string::npos || m.find("corrupted") != std::string::npos ||
                  m.find("not a gzip file") != std::string::npos)
          << m;
    }
  }
  sparcon_test::restore(file, good.substr(0, good.size() / 2));
  EXPECT_TRUE(fails_naming([&] { vqa::read_gzip(file); }, file, "truncated"));
  sparcon_test::restore(file, good + "junk");
  EXPECT_TRUE(fails_naming([&] { vqa::read_gzip(file); }, file, "trailing bytes"));
  sparcon_test::restore(file, good + std::string(16, '\0'));  // zero padding is accepted
  EXPECT_EQ(vqa::read_gzip(file), bytes);
}

TEST_F(VqaFiles, LoadsASplitAndChecksItsFiles) {
  write_split(dir_, vqa::Split::kTest, 12);
  const auto data = vqa::load_fashion_mnist(dir_, vqa::Split::kTest);
  EXPECT_EQ(data.split, vqa::Split::kTest);
  ASSERT_EQ(data.size(), 12u);
  EXPECT_EQ(data.labels[11], 1);
  EXPECT_EQ(data.pixel(5, 27, 27), 35);
  EXPECT_EQ(data.pixels.size(), 12u * 784u);
  EXPECT_FALSE(vqa::fashion_mnist_present(dir_));  // no training files
  EXPECT_EQ(vqa::images_file(dir_, vqa::Split::kTrain).filename(), "train-images-idx3-ubyte.gz");
  EXPECT_EQ(vqa::labels_file(dir_, vqa::Split::kTest).filename(), "t10k-labels-idx1-ubyte.gz");

  const fs::path images = vqa::images_file(dir_, vqa::Split::kTest), labels = vqa::labels_file(dir_, vqa::Split::kTest);
  const auto load = [&] { vqa::load_fashion_mnist(dir_, vqa::Split::kTest); };
  write_gzip(labels, idx_bytes({11}, std::vector<std::uint8_t>(11, 0)));
  EXPECT_TRUE(fails_naming(load, labels, "11 labels for 12 images"));
  write_gzip(labels, idx_bytes({12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0}));
  EXPECT_TRUE(fails_naming(load, labels, "label 10 of item 10 is outside 0..9"));
  write_gzip(labels, idx_bytes({12, 1}, std::vector<std::uint8_t>(12, 0)));
  EXPECT_TRUE(fails_naming(load, labels, "magic number 2050, expected 2049"));
  write_gzip(labels, idx_bytes({12}, std::vector<std::uint8_t>(12, 0)));
  write_gzip(images, idx_bytes({12, 28, 27}, std::vector<std::uint8_t>(12 * 28 * 27, 0)));
  EXPECT_TRUE(fails_naming(load, images, "28 x 27 pixels"));
  const std::string full = idx_bytes({12, 28, 28}, std::vector<std::uint8_t>(12 * 784, 1));
  write_gzip(images, full.substr(0, full.size() - 100));  // a valid gzip of a truncated IDX file
  EXPECT_TRUE(fails_naming(load, images, "truncated"));
  write_gzip(images, full);
  sparcon_test::restore(images, sparcon_test::read(images).substr(0, 40));  // a truncated gzip file
  EXPECT_TRUE(fails_naming(load, images, "truncated"));
  fs::remove(images);
  EXPECT_TRUE(fails_naming(load, images, "dataset-fashion-mnist"));
}

TEST(VqaFashionMnist, RealFilesWhenInstalled) {
  const fs::path folder = vqa::kFashionMnistFolder;
  if (!vqa::fashion_mnist_present(folder))
    GTEST_SKIP() << "no " << folder << ": apt-get install " << vqa::kFashionMnistPackage;
  const auto train = vqa::load_fashion_mnist(folder, vqa::Split::kTrain);
  const auto test = vqa::load_fashion_mnist(folder, vqa::Split::kTest);
  EXPECT_EQ(train.size(), 60000u);
  EXPECT_EQ(test.size(), 10000u);
  std::array<int, 10> train_counts{}, test_counts{};
  for (const int l : train.labels) ++train_counts[static_cast<std::size_t>(l)];
  for (const int l : test.labels) ++test_counts[static_cast<std::size_t>(l)];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train_counts[static_cast<std::size_t>(c)], 6000) << vqa::kClassNames[static_cast<std::size_t>(c)];
    EXPECT_EQ(test_counts[static_cast<std::size_t>(c)], 1000) << vqa::kClassNames[static_cast<std::size_t>(c)];
  }
  EXPECT_EQ(train.labels[0], 9);  // the first training item is an ankle boot (the dataset's README)
  // Items are ink on a black background: the border pixels are mostly 0.
  std::size_t border_zero = 0;
  for (std::size_t i = 0; i < 1000; ++i)
    for (std::size_t k = 0; k < 28; ++k) border_zero += (train.pixel(i, 0, k) == 0) + (train.pixel(i, 27, k) == 0);
  EXPECT_GT(border_zero, 1000u * 56u * 6 / 10);
}

TEST(VqaClasses, NamesWordsAndGroups) {
  EXPECT_STREQ(vqa::kClassNames[0], "T-shirt/top");
  EXPECT_STREQ(vqa::kClassNames[9], "Ankle boot");
  EXPECT_EQ(vqa::class_word(9), "ankle boot");
  EXPECT_EQ(vqa::class_plural(3), "dresses");
  EXPECT_STREQ(vqa::class_article(9), "an");
  EXPECT_STREQ(vqa::class_article(8), "a");
  EXPECT_THROW(vqa::class_word(10), std::out_of_range);
  const auto& groups = vqa::class_groups();
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].plural, "tops");
  EXPECT_THAT(groups[0].labels, ElementsAre(0, 2, 4, 6));
  EXPECT_EQ(groups[1].plural, "shoes");
  EXPECT_THAT(groups[1].labels, ElementsAre(5, 7, 9));
  EXPECT_THAT(groups[3].labels.size(), 10u);
  EXPECT_EQ(vqa::count_targets().size(), 14u);
  EXPECT_EQ(vqa::count_targets()[7].plural, "sneakers");
}

TEST(VqaVocabulary, TokensWordsAndAnswers) {
  EXPECT_THAT(vqa::tokenize("What is  in the centre?"), ElementsAre("what", "is", "in", "the", "centre", "?"));
  EXPECT_THAT(vqa::tokenize("how many ankle boots are there ?"),
              ElementsAre("how", "many", "ankle", "boots", "are", "there", "?"));
  const auto& words = vqa::word_vocabulary();
  EXPECT_EQ(words.symbol(vqa::kWordPad), "<pad>");
  EXPECT_EQ(words.symbol(vqa::kWordUnknown), "<unk>");
  // The template words, listed here by hand.
  const std::set<std::string> expected = {
      "what", "is", "in", "the", "top-left", "top-right", "bottom-left", "bottom-right", "centre", "?", "how",
      "many", "are", "there", "t-shirts", "trousers", "pullovers", "dresses", "coats", "sandals", "shirts",
      "sneakers", "bags", "ankle", "boots", "tops", "shoes", "clothes", "things", "a", "an", "t-shirt", "trouser",
      "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot", "left", "of", "right", "above", "below"};
  EXPECT_EQ(words.size(), expected.size() + 2);
  for (const auto& w : expected) EXPECT_TRUE(words.contains(w)) << w;
  for (std::size_t i = 3; i < words.size(); ++i) EXPECT_LT(words.symbols()[i - 1], words.symbols()[i]);
  EXPECT_THAT(vqa::encode_question("Is there a hat?"),
              ElementsAre(words.id("is"), words.id("there"), words.id("a"), vqa::kWordUnknown, words.id("?")));

  const auto& answers = vqa::answer_vocabulary();
  ASSERT_EQ(answers.size(), 17u);
  for (int c = 0; c < 10; ++c) EXPECT_EQ(answers.id(vqa::kClassNames[static_cast<std::size_t>(c)]), c);
  EXPECT_EQ(answers.id("0"), 10);
  EXPECT_EQ(answers.id("4"), 14);
  EXPECT_EQ(answers.id("yes"), 15);
  EXPECT_EQ(answers.id("no"), 16);
  EXPECT_THROW((void)answers.id("maybe"), std::invalid_argument);
  EXPECT_THROW((void)answers.symbol(17), std::out_of_range);
  EXPECT_THROW(vqa::Vocabulary({"a", "a"}), std::invalid_argument);
  EXPECT_NE(words.fingerprint(), answers.fingerprint());
}

}  // namespace
