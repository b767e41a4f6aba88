// The progress bar (kit/progress.h).
#include "kit/progress.h"

#include <algorithm>
#include <utility>

namespace kit {

Progress::Progress(bool enabled, std::string label, std::size_t total, std::string unit, std::FILE* stream)
    : enabled_(enabled),
      label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      stream_(stream),
      start_(std::chrono::steady_clock::now()) {}

void Progress::update(std::size_t done, std::size_t items, double loss) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(items) / elapsed : 0;
  const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
  const int width = 24, filled = static_cast<int>(width * done / std::max<std::size_t>(total_, 1));
  std::fprintf(stream_, "\r  %s [%s%s] %zu/%zu  %.0f %s/s  ETA %2d:%02d  loss %.4f ", label_.c_str(),
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), '.').c_str(), done, total_, rate, unit_.c_str(),
               static_cast<int>(eta) / 60, static_cast<int>(eta) % 60, loss);
  if (done == total_) std::fprintf(stream_, "\n");
}

}  // namespace kit
