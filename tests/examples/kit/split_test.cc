// kit/split.h: the seeded stratified split and the platform-independent bounded draw.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "kit/split.h"

namespace {

using ::testing::ElementsAre;

TEST(Split, SplitIsStratifiedReproducibleAndAPartition) {
  std::vector<int> labels;
  for (int i = 0; i < 1000; ++i) labels.push_back(i % 5 == 0 ? 1 : 0);  // 200 spam, 800 ham
  const auto a = kit::stratified_split(labels, 0.1, 0.2, 7);
  const auto b = kit::stratified_split(labels, 0.1, 0.2, 7);
  const auto c = kit::stratified_split(labels, 0.1, 0.2, 8);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.test, b.test);
  EXPECT_NE(a.test, c.test);
  EXPECT_EQ(a.test.size(), 200u);
  EXPECT_EQ(a.dev.size(), 100u);
  EXPECT_EQ(a.train.size(), 700u);
  auto spam_count = [&](const std::vector<std::size_t>& part) {
    std::size_t n = 0;
    for (auto i : part) n += static_cast<std::size_t>(labels[i]);
    return n;
  };
  EXPECT_EQ(spam_count(a.test), 40u);
  EXPECT_EQ(spam_count(a.dev), 20u);
  std::set<std::size_t> all(a.train.begin(), a.train.end());
  all.insert(a.dev.begin(), a.dev.end());
  all.insert(a.test.begin(), a.test.end());
  EXPECT_EQ(all.size(), 1000u);
  // The split does not depend on the standard library's shuffle (std::mt19937_64 is specified
  // bit for bit, the shuffle and the bounded draws are the library's own): pinned here.
  EXPECT_THAT(std::vector<std::size_t>(a.test.begin(), a.test.begin() + 4), ElementsAre(11u, 13u, 22u, 23u));
  EXPECT_THROW(kit::stratified_split(labels, 0.5, 0.5, 1), std::invalid_argument);
  EXPECT_THROW(kit::stratified_split(labels, -0.1, 0.2, 1), std::invalid_argument);
}

TEST(Split, UniformBelowStaysInRangeAndRejectsAnEmptyRange) {
  std::mt19937_64 rng(3);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) ++seen[kit::uniform_below(rng, 7)];
  for (int count : seen) EXPECT_NEAR(count, 1000, 150);
  EXPECT_THROW(kit::uniform_below(rng, 0), std::invalid_argument);
}

}  // namespace
