// Argument checks shared by the core: each failure throws std::invalid_argument whose message
// names the function, the argument and the offending value.
#pragma once

#include <cstddef>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sparcon/rows.h"

namespace sparcon::detail {

template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream message;
  message.precision(17);
  (message << ... << parts);
  throw std::invalid_argument(message.str());
}

/// `name` must hold exactly `expected` entries.
template <class T>
void check_size(const char* function, const char* name, std::span<T> data, std::size_t expected,
                const char* what = "rows.count * rows.length") {
  if (data.size() != expected)
    fail("sparcon::", function, ": ", name, " has ", data.size(), " entries, expected ", what,
         " = ", expected);
}

/// Two spans are either the same memory (in-place use) or disjoint.
template <class A, class B>
void check_no_partial_overlap(const char* function, const char* in, std::span<A> a,
                              const char* out, std::span<B> b) {
  const auto* a0 = reinterpret_cast<const char*>(a.data());
  const auto* b0 = reinterpret_cast<const char*>(b.data());
  const auto* a1 = a0 + a.size_bytes();
  const auto* b1 = b0 + b.size_bytes();
  const bool same = a0 == b0 && a1 == b1;
  const bool disjoint = a1 <= b0 || b1 <= a0 || a.empty() || b.empty();
  if (!same && !disjoint)
    fail("sparcon::", function, ": ", out, " partially overlaps ", in,
         " (they must be the same array or disjoint)");
}

/// A per-row parameter is one shared value or one value per row.
template <class T>
void check_per_row(const char* function, const char* name, const PerRow<T>& values,
                   std::size_t rows) {
  if (!values.shared() && values.size() != rows)
    fail("sparcon::", function, ": ", name, " has ", values.size(),
         " per-row values, expected rows.count = ", rows, " (or a single shared value)");
}

}  // namespace sparcon::detail
