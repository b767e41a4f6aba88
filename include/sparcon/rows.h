// sparcon/rows.h: how the core sees its data, a batch of rows stored row-major.
//
// Every discrete-core function works on `rows.count` rows of `rows.length` entries each,
// stored contiguously: entry (r, i) is data[r * rows.length + i]. Rows are independent, so
// a call may spread them over several threads (`Threads`). Per-row parameters (alpha, the
// budget) are passed as `PerRow<T>`: one value for every row, or one value per row.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

namespace sparcon {

/// Shape of a row-major batch: `count` rows of `length` entries.
struct Rows {
  std::size_t count = 0;
  std::size_t length = 0;

  /// Number of entries, count * length.
  [[nodiscard]] constexpr std::size_t size() const noexcept { return count * length; }
};

/// How many threads one call may use for its rows; 1 runs on the caller's thread only.
/// Rows are split into contiguous blocks, one per thread; results do not depend on it.
struct Threads {
  unsigned count = 1;
};

/// A per-row parameter: either one value shared by all rows or a span with one value per
/// row (its size must then equal rows.count; the functions check it).
template <std::floating_point T>
class PerRow {
 public:
  PerRow(T value) : value_(value) {}                       // NOLINT: implicit by design
  PerRow(std::span<const T> values) : values_(values) {}   // NOLINT: implicit by design

  /// The value for row r.
  [[nodiscard]] T operator[](std::size_t r) const { return values_.empty() ? value_ : values_[r]; }
  /// True when a single value is shared by every row.
  [[nodiscard]] bool shared() const noexcept { return values_.empty(); }
  /// Number of values given (1 when shared).
  [[nodiscard]] std::size_t size() const noexcept { return values_.empty() ? 1 : values_.size(); }

 private:
  T value_{};
  std::span<const T> values_{};
};

}  // namespace sparcon
