// Independent training runs side by side as child processes: an experiment's (variant, seed)
// runs share nothing but the data on disk, so on a machine with several cores each runs in its
// own process (its own torch and BLAS state: no library needs to be safe for concurrent calls),
// at most `jobs` at a time, and the parent collects the finished runs afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
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

/// The default of an experiment's --jobs: one run per core (at least 1). Measured on 2 cores,
/// runs side by side beat one run after another on torch's intra-op threads in every experiment
/// (README).
std::size_t default_jobs();

/// An experiment's runs side by side: `command(variant, seed)` (the argv of one `train` run)
/// for every seed, and within it every variant in the order given, run by run_commands with
/// `jobs` at a time. Nothing for jobs <= 1: the caller then trains them one after another in
/// its own process. Either way the caller's run_experiment finds the finished runs afterwards.
template <class Command>
void train_side_by_side(const std::vector<std::uint64_t>& seeds, const std::vector<std::string>& variants,
                        Command&& command, std::size_t jobs) {
  if (jobs <= 1) return;
  std::vector<std::vector<std::string>> commands;
  for (const auto seed : seeds)
    for (const auto& variant : variants) commands.push_back(command(variant, seed));
  std::fprintf(stderr, "training %zu runs, %zu side by side\n", commands.size(), jobs);
  run_commands(commands, jobs);
}

}  // namespace kit
