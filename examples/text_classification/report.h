// The HTML report of the text-classification experiment: the results table, then a few test
// documents per attention variant with the discrete weights shaded per token and the continuous
// density drawn over the same positions. One self-contained file: inline CSS and SVG, no
// JavaScript, no external resources.
#pragma once

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spam {

/// One test document as a variant sees it.
struct DocumentView {
  std::string id;
  int label = 0;      ///< true label: 1 spam, 0 ham
  int predicted = 0;  ///< predicted label
  double spam_probability = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> tokens;
  /// The discrete attention weight of each token (same size as tokens), or empty.
  std::vector<float> discrete_weights;
  /// The continuous density at each token position t_l = (l + 1/2) / L, l = 0..L-1 (normally
  /// L = tokens.size(); the SVG uses the vector's own length), or empty.
  std::vector<float> density;
  /// The support of continuous sparsemax as positions in [0, 1]; NaN when unbounded (softmax).
  double support_begin = std::numeric_limits<double>::quiet_NaN();
  double support_end = std::numeric_limits<double>::quiet_NaN();
};

struct VariantDocuments {
  std::string variant;
  std::vector<DocumentView> documents;
};

/// Tokens shown per document; the rest are summarised in a note (the density plot still covers
/// the whole document).
inline constexpr std::size_t kMaxTokensShown = 300;

/// The token indices [first, last] whose positions t_l = (l + 1/2) / length lie in
/// [begin, end]; {1, 0} (empty) when none do or when the bounds are not finite.
std::pair<std::ptrdiff_t, std::ptrdiff_t> attended_token_range(double begin, double end, std::size_t length);

/// The report as one HTML5 string. results_table is either Markdown (as written by
/// write_results/results_table_markdown: "#" headings, "- " list items and "|" tables are
/// converted by kit::markdown_to_html, all text escaped) or, when it starts with '<', an HTML fragment embedded as is.
/// Throws std::invalid_argument when a document's discrete_weights is neither empty nor as long
/// as its tokens.
std::string render_html_report(const std::string& title, const std::vector<VariantDocuments>& variants,
                               const std::string& results_table);

/// render_html_report written to file with write_atomically (parent directories are created).
void write_html_report(const std::filesystem::path& file, const std::string& title,
                       const std::vector<VariantDocuments>& variants,
                       const std::string& results_markdown_or_html_table);

}  // namespace spam
