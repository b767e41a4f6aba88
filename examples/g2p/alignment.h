// Where the decoder's attention looks, torch-free: for each output phoneme the letters it reads
// and the letter it is centred on, summed over words into the experiment's two numbers, the
// letters attended per phoneme and the monotonicity of the alignment.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace g2p {

/// The attention of one decoder step over a word of L letters, letter l at position
/// t_l = (l + 1/2) / L.
struct StepAttention {
  /// Discrete weights per letter (L), or empty (the continuous "cont" variants).
  std::vector<double> weights;
  /// The continuous density, or NaN (the discrete variants).
  double mu = std::numeric_limits<double>::quiet_NaN();
  double sigma2 = std::numeric_limits<double>::quiet_NaN();
  /// The bounded support [mu - a, mu + a] of continuous sparsemax; NaN when unbounded (softmax).
  double support_begin = std::numeric_limits<double>::quiet_NaN();
  double support_end = std::numeric_limits<double>::quiet_NaN();

  [[nodiscard]] bool continuous() const { return mu == mu; }
};

/// The letters a step reads: with a density, those whose position lies in the support (all L
/// when it is unbounded); otherwise those with weight > 0. Throws std::invalid_argument when
/// weights is neither empty nor of size L, or when neither a density nor weights are given.
std::size_t attended_letters(const StepAttention& step, std::size_t length);

/// The letter a step is centred on: with a density, the letter whose cell [l, l + 1) / L holds
/// mu (clamped to 0..L-1); otherwise the first letter of largest weight.
std::size_t centre_letter(const StepAttention& step, std::size_t length);

/// Sums over the decoded words.
struct AlignmentStats {
  std::size_t steps = 0;           ///< output phonemes (the end symbol's step not counted)
  std::size_t attended = 0;        ///< sum of attended_letters over the steps
  std::size_t letters = 0;         ///< sum of the word length over the steps
  std::size_t moves = 0;           ///< consecutive step pairs within a word
  std::size_t forward_moves = 0;   ///< of them, those whose centre letter does not decrease

  /// Adds one word: steps[t] the attention of output phoneme t (t = 0..T-1), over `length` letters.
  void add_word(const std::vector<StepAttention>& word_steps, std::size_t length);
  /// attended / steps: letters read per phoneme; NaN for no steps.
  [[nodiscard]] double letters_per_phoneme() const;
  /// attended / letters: the fraction of the word read per phoneme; NaN for no steps.
  [[nodiscard]] double fraction_read() const;
  /// forward_moves / moves: the fraction of steps whose centre does not move backwards; NaN for none.
  [[nodiscard]] double monotonicity() const;
};

}  // namespace g2p
