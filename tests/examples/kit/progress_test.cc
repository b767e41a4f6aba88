// kit/progress.h: the bar's text at a known point, the line ended when done, nothing when
// disabled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kit/progress.h"

namespace {

using ::testing::HasSubstr;

std::string written(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

TEST(Progress, DrawsTheBarAndEndsTheLineWhenDone) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  kit::Progress bar(true, "softmax epoch 1", 4, "docs", f);
  bar.update(1, 32, 0.75);
  bar.update(4, 100, 0.5);
  const std::string text = written(f);
  EXPECT_THAT(text, HasSubstr("\r  softmax epoch 1 [######..................] 1/4  "));
  EXPECT_THAT(text, HasSubstr(" docs/s  ETA "));
  EXPECT_THAT(text, HasSubstr("loss 0.7500 "));
  EXPECT_THAT(text, HasSubstr("[########################] 4/4"));
  EXPECT_EQ(text.back(), '\n');
  std::fclose(f);
}

TEST(Progress, DisabledPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  kit::Progress bar(false, "x", 2, "docs", f);
  bar.update(2, 2, 0.1);
  EXPECT_EQ(written(f), "");
  std::fclose(f);
}

}  // namespace
