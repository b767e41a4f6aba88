// A dense rows x cols matrix of doubles, the input of the heat maps, contours and images.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kit {

/// Row-major: entry (r, c) is values[r * cols + c]. An alignment matrix has one row per output
/// step and one column per input position; an image grid one row per pixel row.
struct Matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;

  [[nodiscard]] double operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
};

/// Throws std::invalid_argument naming `function` and `argument` unless m has at least one
/// row and one column, exactly rows * cols values, and every value finite (the message names
/// the first bad entry and its value).
void check_matrix(const Matrix& m, std::string_view function, std::string_view argument);

}  // namespace kit
