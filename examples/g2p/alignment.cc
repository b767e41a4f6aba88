// Where the decoder's attention looks (alignment.h).
#include "alignment.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace g2p {
namespace {

void check(const StepAttention& step, std::size_t length) {
  if (length == 0) throw std::invalid_argument("attention over a word of 0 letters");
  if (!step.weights.empty() && step.weights.size() != length)
    throw std::invalid_argument("attention weights of " + std::to_string(step.weights.size()) +
                                " letters over a word of " + std::to_string(length));
  if (!step.continuous() && step.weights.empty())
    throw std::invalid_argument("a step with neither a density nor discrete weights");
}

}  // namespace

std::size_t attended_letters(const StepAttention& step, std::size_t length) {
  check(step, length);
  if (step.continuous()) {
    if (!std::isfinite(step.support_begin) || !std::isfinite(step.support_end)) return length;
    std::size_t inside = 0;
    for (std::size_t l = 0; l < length; ++l) {
      const double t = (static_cast<double>(l) + 0.5) / static_cast<double>(length);
      inside += t >= step.support_begin && t <= step.support_end ? 1 : 0;
    }
    return inside;
  }
  return static_cast<std::size_t>(std::count_if(step.weights.begin(), step.weights.end(), [](double w) { return w > 0; }));
}

std::size_t centre_letter(const StepAttention& step, std::size_t length) {
  check(step, length);
  if (step.continuous()) {
    const double cell = std::floor(step.mu * static_cast<double>(length));
    return static_cast<std::size_t>(std::clamp(cell, 0.0, static_cast<double>(length - 1)));
  }
  return static_cast<std::size_t>(std::max_element(step.weights.begin(), step.weights.end()) - step.weights.begin());
}

void AlignmentStats::add_word(const std::vector<StepAttention>& word_steps, std::size_t length) {
  std::size_t previous = 0;
  for (std::size_t t = 0; t < word_steps.size(); ++t) {
    const std::size_t centre = centre_letter(word_steps[t], length);
    attended += attended_letters(word_steps[t], length);
    letters += length;
    ++steps;
    if (t > 0) {
      ++moves;
      forward_moves += centre >= previous ? 1 : 0;
    }
    previous = centre;
  }
}

double AlignmentStats::letters_per_phoneme() const {
  return steps == 0 ? std::nan("") : static_cast<double>(attended) / static_cast<double>(steps);
}
double AlignmentStats::fraction_read() const {
  return steps == 0 ? std::nan("") : static_cast<double>(attended) / static_cast<double>(letters);
}
double AlignmentStats::monotonicity() const {
  return moves == 0 ? std::nan("") : static_cast<double>(forward_moves) / static_cast<double>(moves);
}

}  // namespace g2p
