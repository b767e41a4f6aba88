// kit::run_commands: every command runs once, at most `jobs` at a time, and a failure names the
// command and how it ended, after all commands have run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

#include "kit/child_processes.h"
#include "test_files.h"

namespace {

using ::testing::HasSubstr;
using ChildProcesses = sparcon_test::TempDirTest;

// A command that appends its name to dir/log, then (with `hold`) keeps a marker file while it
// sleeps, recording the most markers it saw at once.
std::vector<std::string> append(const std::filesystem::path& dir, const std::string& name, bool hold = false) {
  const std::string d = dir.string();
  std::string script = "echo " + name + " >> " + d + "/log";
  if (hold)
    script += "; touch " + d + "/run." + name + "; ls " + d + " | grep -c '^run\\.' >> " + d +
              "/concurrent; sleep 0.3; rm " + d + "/run." + name;
  return {"/bin/sh", "-c", script};
}

TEST_F(ChildProcesses, EveryCommandRunsOnceAtMostJobsAtATime) {
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 6; ++i) commands.push_back(append(dir_, "c" + std::to_string(i), true));
  kit::run_commands(commands, 2);
  std::ifstream log(dir_ / "log");
  std::vector<std::string> names;
  for (std::string line; std::getline(log, line);) names.push_back(line);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4", "c5"}));
  std::ifstream concurrent(dir_ / "concurrent");
  int most = 0;
  for (int n; concurrent >> n;) most = std::max(most, n);
  EXPECT_LE(most, 2);
  EXPECT_GE(most, 1);
}

TEST_F(ChildProcesses, FailuresNameTheCommandAfterAllHaveRun) {
  std::vector<std::vector<std::string>> commands{append(dir_, "a"), {"/bin/sh", "-c", "exit 3"}, append(dir_, "b"),
                                                 {"/nonexistent/program"}, {"/bin/sh", "-c", "kill -9 $$"}};
  try {
    kit::run_commands(commands, 3);
    FAIL() << "expected a failure";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("`/bin/sh -c exit 3` exited with status 3"));
  }
  const std::string log = sparcon_test::read(dir_ / "log");
  EXPECT_THAT(log, HasSubstr("a"));
  EXPECT_THAT(log, HasSubstr("b"));
  try {
    kit::run_commands({{"/bin/sh", "-c", "kill -9 $$"}}, 1);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("killed by signal"));
  }
  try {
    kit::run_commands({{"/nonexistent/program"}}, 1);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/program"));
  }
  EXPECT_THROW(kit::run_commands({{"/bin/true"}}, 0), std::invalid_argument);
  EXPECT_THROW(kit::run_commands({{}}, 1), std::invalid_argument);
  EXPECT_NO_THROW(kit::run_commands({}, 2));
  EXPECT_FALSE(kit::self_executable().empty());
}

}  // namespace
