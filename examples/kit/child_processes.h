// Independent training runs side by side as child processes: an experiment's (variant, seed)
// runs share nothing but the data on disk, so on a machine with several cores each runs in its
// own process (its own torch and BLAS state: no library needs to be safe for concurrent calls),
// at most `jobs` at a time, and the parent collects the finished runs afterwards.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kit {

/// The path of the running program (/proc/self/exe), for commands that run it again.
std::string self_executable();

/// Runs each command (argv[0] a path, no shell) as a child process, at most `jobs` at a time,
/// starting the next when one ends; children inherit stdout and stderr. Waits for all of them,
/// then throws std::runtime_error naming the first command (in order) that could not start or
/// did not exit with status 0, and how it ended. Throws std::invalid_argument for jobs = 0 or
/// an empty command.
void run_commands(const std::vector<std::vector<std::string>>& commands, std::size_t jobs);

}  // namespace kit
