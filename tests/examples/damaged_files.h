// Damaging the files of a run directory the ways a disk, an interrupted copy or a careless
// edit does (truncated at several points, emptied, overwritten with other bytes, missing), and
// the check that a damaged file is reported as one line naming it and saying what to do.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "kit/run_directory.h"
#include "test_files.h"

namespace sparcon_test {

/// One way of damaging a file: its name and the bytes left (or `remove`: the file deleted).
struct Damage {
  std::string name;
  std::string bytes;
  bool remove = false;
};

/// Ways of damaging a file whose good content is `good`: empty, truncated to 1 byte, 10%, half
/// and all but the last byte; its middle bytes overwritten; replaced by text; missing.
inline std::vector<Damage> damages(const std::string& good) {
  std::vector<Damage> out{{"empty", ""}, {"truncated to 1 byte", good.substr(0, 1)}};
  for (const double fraction : {0.1, 0.5}) {
    const auto n = static_cast<std::size_t>(fraction * static_cast<double>(good.size()));
    out.push_back({"truncated to " + std::to_string(n) + " of " + std::to_string(good.size()) + " bytes", good.substr(0, n)});
  }
  out.push_back({"last byte missing", good.substr(0, good.size() - 1)});
  std::string overwritten = good;
  for (std::size_t i = good.size() / 3; i < good.size() / 3 + 64 && i < good.size(); ++i) overwritten[i] = '\x5a';
  out.push_back({"middle bytes overwritten", overwritten});
  out.push_back({"replaced by text", "this is not what the file should hold\n"});
  out.push_back({"missing", "", true});
  return out;
}

inline void apply(const Damage& damage, const std::filesystem::path& file) {
  if (damage.remove) {
    std::filesystem::remove(file);
  } else {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damage.bytes;
  }
}

inline void restore(const std::filesystem::path& file, const std::string& good) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << good;
}

/// `call` throws kit::DamagedFile for `file`, with a one-line message that names the file and
/// says what to do (and carries no stack trace).
inline ::testing::AssertionResult reports_damaged(const std::function<void()>& call, const std::filesystem::path& file) {
  try {
    call();
  } catch (const kit::DamagedFile& e) {
    const std::string what = e.what();
    if (e.file() != file) return ::testing::AssertionFailure() << "names " << e.file() << ", not " << file << ": " << what;
    if (what.find(file.string()) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks " << file << ": " << what;
    if (what.find("delete the run directory") == std::string::npos || what.find("train again") == std::string::npos)
      return ::testing::AssertionFailure() << "message does not say what to do: " << what;
    if (what.find('\n') != std::string::npos || what.find("Exception raised from") != std::string::npos)
      return ::testing::AssertionFailure() << "message is not one line: " << what;
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// Every damage of a run directory's state.json (but its removal: then there is no run) and of
/// its best checkpoint makes `load` report that file (reports_damaged); "middle bytes
/// overwritten" of the checkpoint may go unnoticed (bytes inside a stored tensor), but an error
/// must name the file. Each file is restored after each damage; `load` must succeed at the end.
inline void expect_run_damage_reported(const std::filesystem::path& run, const std::function<void()>& load) {
  const std::filesystem::path state = run / "state.json";
  std::ifstream in(state, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\"best\": \"";
  const std::size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << state << " names no best checkpoint";
  const std::size_t begin = at + key.size();
  const std::filesystem::path best = run / text.substr(begin, text.find('"', begin) - begin);
  for (const std::filesystem::path& file : {state, best}) {
    std::ifstream f(file, std::ios::binary);
    const std::string good((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const auto& damage : damages(good)) {
      if (damage.remove && file == state) continue;
      apply(damage, file);
      if (damage.name == "middle bytes overwritten" && file != state) {
        try {
          load();
        } catch (const kit::DamagedFile& e) {
          EXPECT_EQ(e.file(), file) << e.what();
        }
      } else {
        EXPECT_TRUE(reports_damaged(load, file)) << file << ": " << damage.name;
      }
      restore(file, good);
    }
  }
  EXPECT_NO_THROW(load());
}

}  // namespace sparcon_test
