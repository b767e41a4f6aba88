// A one-line progress bar on stderr for a loop over batches: done/total, throughput and ETA.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace kit {

class Progress {
 public:
  /// A bar labelled `label` for `total` steps; `unit` names what the throughput counts
  /// ("docs" -> "123 docs/s"). A disabled bar prints nothing. The clock starts here.
  Progress(bool enabled, std::string label, std::size_t total, std::string unit = "items", std::FILE* stream = stderr);

  /// After `done` of the total steps, `items` processed so far and the running mean loss:
  /// redraws "\r  <label> [####....] done/total  <items/elapsed> <unit>/s  ETA m:ss  loss x"
  /// (24 cells, filled = 24 * done / total; ETA = elapsed * (total - done) / done) and ends
  /// the line when done == total.
  void update(std::size_t done, std::size_t items, double loss);

 private:
  bool enabled_;
  std::string label_, unit_;
  std::size_t total_;
  std::FILE* stream_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kit
