// The HTML report of the grapheme-to-phoneme experiment: the results table, then for each
// attention variant a few test words, each with its alignment heat map (output phonemes x input
// letters: the discrete weights, or the continuous density's mass over each letter's cell) and,
// for the continuous variants, the density of every step drawn over the letters with its
// support. One self-contained file: inline CSS and SVG, no JavaScript, no external resources.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "alignment.h"
#include "kit/matrix.h"

namespace g2p {

/// One test word as a variant decodes it.
struct WordView {
  std::string word;
  std::vector<std::string> output;      ///< the greedy output's phonemes
  std::vector<std::string> references;  ///< each pronunciation, phonemes joined by spaces
  bool correct = false;
  /// One row per output phoneme, one column per letter: discrete weights, or for "cont" the
  /// density's mass over the letter's cell [l, l + 1) / L. Rows = output.size().
  kit::Matrix alignment;
  std::vector<StepAttention> steps;     ///< one per output phoneme
  /// Continuous variants: per output phoneme the density p(t) at t = (j + 1/2) / M, j < M
  /// (the same M for every step), drawn as a curve over the letters; empty for discrete ones.
  std::vector<std::vector<double>> curves;
};

struct VariantWords {
  std::string variant;
  std::vector<WordView> words;
};

/// The densities of a word's steps over its letters: one strip per phoneme (its label left),
/// the curve scaled to the strip's peak, the support [support_begin, support_end] shaded, the
/// letters' cell boundaries as ticks and the letters below. Throws std::invalid_argument when
/// curves is not one non-empty, finite curve per output phoneme.
std::string density_strips_svg(const WordView& view);

/// The report as one HTML5 string: title, the results table (Markdown as results.md holds it,
/// via kit::markdown_to_html), then per variant its words: the phonemes and references, right
/// or wrong, the alignment heat map (kit::heatmap_svg) and the density strips. Throws
/// std::invalid_argument when an alignment matrix is not output.size() x word.size() (a word
/// with no output shows a note instead).
std::string render_report(const std::string& title, const std::string& results_markdown,
                          const std::vector<VariantWords>& variants);

/// render_report written to file with write_atomically (parent directories are created).
void write_report(const std::filesystem::path& file, const std::string& title, const std::string& results_markdown,
                  const std::vector<VariantWords>& variants);

}  // namespace g2p
