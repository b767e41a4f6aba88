// Independent training runs side by side as child processes (child_processes.h).
#include "kit/child_processes.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kit {
namespace {

std::string joined(const std::vector<std::string>& command) {
  std::string out;
  for (const auto& a : command) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

}  // namespace

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::size_t default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

void run_commands(const std::vector<std::vector<std::string>>& commands, std::size_t jobs) {
  if (jobs == 0) throw std::invalid_argument("run_commands: jobs = 0; at least one is needed");
  for (const auto& c : commands)
    if (c.empty()) throw std::invalid_argument("run_commands: an empty command");
  std::vector<std::string> failures(commands.size());
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  auto wait_one = [&] {
    int status = 0;
    pid_t pid;
    do {
      pid = waitpid(-1, &status, 0);
    } while (pid < 0 && errno == EINTR);
    if (pid < 0) throw std::runtime_error(std::string("run_commands: waitpid failed: ") + std::strerror(errno));
    const auto it = running.find(pid);
    if (it == running.end()) return;  // not one of ours
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures[it->second] = how_it_ended(status);
    running.erase(it);
  };
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && running.size() < jobs) {
      std::vector<char*> argv;
      for (const auto& a : commands[next]) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      pid_t pid = 0;
      const int error = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
      if (error != 0) {
        failures[next] = std::string("could not start: ") + std::strerror(error);
      } else {
        running[pid] = next;
      }
      ++next;
    }
    if (!running.empty()) wait_one();
  }
  for (std::size_t i = 0; i < commands.size(); ++i)
    if (!failures[i].empty()) throw std::runtime_error("`" + joined(commands[i]) + "` " + failures[i]);
}

}  // namespace kit
