// kit/atomic_file.h: replacing a file atomically, and writing one with its directories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "kit/atomic_file.h"
#include "test_files.h"

namespace {

using ::testing::HasSubstr;
using sparcon_test::entries;
using sparcon_test::read;
using OutputTest = sparcon_test::TempDirTest;


TEST_F(OutputTest, WriteAtomicallyReplacesContentAndLeavesNoTempFile) {
  const auto file = dir_ / "out.txt";
  kit::write_atomically(file, "first version, rather long\n");
  EXPECT_EQ(read(file), "first version, rather long\n");
  kit::write_atomically(file, "second");
  EXPECT_EQ(read(file), "second");
  kit::write_atomically(file, "");
  EXPECT_EQ(read(file), "");
  EXPECT_THAT(entries(dir_), ::testing::ElementsAre("out.txt"));
}

TEST_F(OutputTest, WriteAtomicallyThrowsNamingThePath) {
  const auto file = dir_ / "missing" / "out.txt";
  try {
    kit::write_atomically(file, "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
  }
  EXPECT_THAT(entries(dir_), ::testing::IsEmpty());
}

TEST_F(OutputTest, WriteFileCreatesTheDirectoriesAndNamesWhatFails) {
  const auto file = dir_ / "a" / "b" / "out.html";
  kit::write_file(file, "<p>x</p>");
  EXPECT_EQ(read(file), "<p>x</p>");
  kit::write_file(dir_ / "a" / "b" / "blocker", "");  // a file where a directory is needed
  try {
    kit::write_file(dir_ / "a" / "b" / "blocker" / "out.txt", "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("blocker"));
  }
}

}  // namespace
