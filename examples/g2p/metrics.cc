#include "metrics.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace g2p {
namespace {

template <class T>
std::size_t levenshtein(const std::vector<T>& a, const std::vector<T>& b) {
  // row[j] = d(a[0..i), b[0..j)) for the current i.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // d(i-1, j-1)
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];  // d(i-1, j)
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::size_t edit_distance(const Phonemes& a, const Phonemes& b) { return levenshtein(a, b); }
std::size_t edit_distance(const std::vector<int>& a, const std::vector<int>& b) { return levenshtein(a, b); }

WordScore score_word(const Phonemes& output, const std::vector<Phonemes>& references) {
  if (references.empty()) throw std::invalid_argument("score_word: no reference pronunciations");
  WordScore best;
  for (std::size_t r = 0; r < references.size(); ++r) {
    if (references[r].empty())
      throw std::invalid_argument("score_word: reference pronunciation " + std::to_string(r) + " is empty");
    const std::size_t d = edit_distance(output, references[r]);
    if (r == 0 || d < best.errors) best = WordScore{d, references[r].size(), r, d == 0};
  }
  return best;
}

void ErrorRates::add(const WordScore& score) {
  ++words;
  wrong_words += score.correct ? 0 : 1;
  phoneme_errors += score.errors;
  reference_phonemes += score.reference_length;
}

double ErrorRates::per() const {
  return words == 0 ? std::numeric_limits<double>::quiet_NaN()
                    : static_cast<double>(phoneme_errors) / static_cast<double>(reference_phonemes);
}

double ErrorRates::wer() const {
  return words == 0 ? std::numeric_limits<double>::quiet_NaN()
                    : static_cast<double>(wrong_words) / static_cast<double>(words);
}

ErrorRates error_rates(const std::vector<Phonemes>& outputs, const std::vector<std::vector<Phonemes>>& references) {
  if (outputs.size() != references.size())
    throw std::invalid_argument("error_rates: " + std::to_string(outputs.size()) + " outputs but " +
                                std::to_string(references.size()) + " reference lists");
  ErrorRates rates;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {
      rates.add(score_word(outputs[i], references[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("error_rates: word " + std::to_string(i) + ": " + e.what());
    }
  }
  return rates;
}

}  // namespace g2p
