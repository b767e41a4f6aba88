// The members of the family under test, how to run them through sparcon, and how to compare
// sparcon's output with the long-double reference (reference.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "reference.h"
#include "sparcon/discrete.h"

namespace sparcon_test {

using ref::LD;

/// One member of the family: the map and its parameter (alpha or budget).
struct MapCase {
  std::string name;
  sparcon::Map map;
  double parameter;
};

inline std::string case_name(sparcon::Map map, double parameter) {
  std::ostringstream s;
  switch (map) {
    case sparcon::Map::softmax: return "softmax";
    case sparcon::Map::sparsemax: return "sparsemax";
    case sparcon::Map::entmax15: return "entmax15";
    case sparcon::Map::entmax: s << "entmax(alpha=" << parameter << ")"; break;
    case sparcon::Map::normmax: s << "normmax(alpha=" << parameter << ")"; break;
    case sparcon::Map::budget: s << "budget(b=" << parameter << ")"; break;
  }
  return s.str();
}

inline MapCase make_case(sparcon::Map map, double parameter) {
  return {case_name(map, parameter), map, parameter};
}

inline const std::vector<double>& entmax_alphas() {
  static const std::vector<double> alphas = {0.5, 0.75, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3, 5};
  return alphas;
}
inline const std::vector<double>& normmax_alphas() {
  static const std::vector<double> alphas = {1.05, 1.5, 2, 3, 10};
  return alphas;
}
inline const std::vector<double>& budgets() {
  static const std::vector<double> b = {1, 2, 3.5};
  return b;
}

/// Every map with every parameter under test.
inline std::vector<MapCase> all_cases() {
  using sparcon::Map;
  std::vector<MapCase> cases = {make_case(Map::softmax, 1), make_case(Map::sparsemax, 2),
                                make_case(Map::entmax15, 1.5)};
  for (double a : entmax_alphas()) cases.push_back(make_case(Map::entmax, a));
  for (double a : normmax_alphas()) cases.push_back(make_case(Map::normmax, a));
  for (double b : budgets()) cases.push_back(make_case(Map::budget, b));
  return cases;
}

/// Whether the case is defined for rows of this length (a budget needs b <= length).
inline bool applies(const MapCase& c, std::size_t length) {
  return c.map != sparcon::Map::budget || c.parameter <= static_cast<double>(length);
}

/// The sum of a row of the map: b for the budget, 1 otherwise.
inline double row_total(const MapCase& c) { return c.map == sparcon::Map::budget ? c.parameter : 1.0; }

/// True for maps whose p_i is [(alpha-1) x_i - tau]_+^(...) (normmax, budget: [x_i - tau]),
/// i.e. whose support is {i : k x_i > tau} with k = slope(c). alpha <= 1 is dense.
inline bool is_sparse(const MapCase& c) {
  return c.map != sparcon::Map::softmax && !(c.map == sparcon::Map::entmax && c.parameter <= 1);
}

/// The factor k in "entry i is in the support iff k x_i > tau" (alpha as T rounds it), which is
/// also how tau moves when the row is shifted: tau(x + c) = tau(x) + k c. Softmax (and entmax at
/// alpha = 1), whose tau is logsumexp(x): k = 1.
template <class T>
LD slope(const MapCase& c) {
  switch (c.map) {
    case sparcon::Map::entmax15: return 0.5L;
    case sparcon::Map::entmax:
      return c.parameter == 1 ? LD(1) : static_cast<LD>(static_cast<T>(c.parameter)) - 1;
    default: return 1;
  }
}

template <class T>
sparcon::Family<T> family_of(sparcon::Map map, sparcon::PerRow<T> parameter) {
  using F = sparcon::Family<T>;
  switch (map) {
    case sparcon::Map::softmax: return F::softmax();
    case sparcon::Map::sparsemax: return F::sparsemax();
    case sparcon::Map::entmax15: return F::entmax15();
    case sparcon::Map::entmax: return F::entmax(parameter);
    case sparcon::Map::normmax: return F::normmax(parameter);
    case sparcon::Map::budget: return F::budget(parameter);
  }
  return F::softmax();
}

template <class T>
sparcon::Family<T> family_of(const MapCase& c) {
  return family_of<T>(c.map, static_cast<T>(c.parameter));
}

/// The reference of one row for a map and parameter (the parameter as the library sees it).
inline ref::Result reference_row(sparcon::Map map, LD parameter, std::span<const LD> x) {
  switch (map) {
    case sparcon::Map::softmax: return ref::softmax(x);
    case sparcon::Map::sparsemax: return ref::sparsemax(x);
    case sparcon::Map::entmax15: return ref::entmax15(x);
    case sparcon::Map::entmax: return ref::entmax(x, parameter);
    case sparcon::Map::normmax: return ref::normmax(x, parameter);
    case sparcon::Map::budget: return ref::budget(x, parameter);
  }
  return {};
}

template <class T>
std::vector<LD> promote(std::span<const T> x) {
  return std::vector<LD>(x.begin(), x.end());
}

/// Row r of a row-major batch.
template <class T>
std::span<const T> row_of(const std::vector<T>& data, sparcon::Rows rows, std::size_t r) {
  return std::span<const T>(data).subspan(r * rows.length, rows.length);
}

/// Absolute accuracy required of sparcon against the reference.
template <class T>
constexpr LD map_tolerance() {
  return std::is_same_v<T, float> ? 1e-6L : 1e-12L;
}

/// The tolerance for entry i: map_tolerance, plus, where p_i = scale [base_i]_+^e with e < 1
/// (alpha > 2), the change of p_i when base_i = z_i - tau moves by the reference's own rounding:
/// 8 long-double eps (|z_i| + |tau| + max over the support |z_j|), z in the shifted row (max 0).
/// Near the support boundary base^e has an unbounded derivative, and the reference resolves p_i
/// no better there (support_edge_test.cc has one in 113 bits). Until 2026-12-07 the margin was
/// 8 eps of T: sparcon's own rounding of the offset moved an entry on the edge that much.
template <class T>
LD entry_tolerance(const ref::Result& r, std::size_t i) {
  LD tol = map_tolerance<T>();
  if (r.exponent > 0 && r.exponent < 1 && !r.base.empty()) {
    const LD d = r.base[i];
    if (std::isfinite(d)) {
      const LD z = d + r.tau_shifted;
      const LD delta = 8 * std::numeric_limits<LD>::epsilon() * (std::fabs(z) + std::fabs(r.tau_shifted) + r.z_scale);
      auto pw = [&](LD b) { return b > 0 ? std::pow(b, r.exponent) : LD(0); };
      tol += r.scale * std::max(std::fabs(pw(d + delta) - pw(d)), std::fabs(pw(d - delta) - pw(d)));
    }
  }
  return tol;
}

/// sparcon's output of a forward call.
template <class T>
struct Forward {
  std::vector<T> p;
  std::vector<T> tau;
};

template <class T>
Forward<T> run_forward(const sparcon::Family<T>& family, const std::vector<T>& x, sparcon::Rows rows,
                       unsigned threads = 1) {
  Forward<T> out{std::vector<T>(x.size()), std::vector<T>(rows.count)};
  sparcon::forward<T>(family, std::span<const T>(x), std::span<T>(out.p), rows,
                      sparcon::Threads{threads}, std::span<T>(out.tau));
  return out;
}

/// Compares one row of sparcon's output (p, tau) with the reference computed on the same inputs.
/// `check_tau`: the threshold is unique for every map but the budget (flat where p is 0 or 1).
template <class T>
::testing::AssertionResult row_matches(std::span<const T> p, T tau, const ref::Result& expected,
                                       bool check_tau) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    const LD got = p[i];
    const LD want = expected.p[i];
    const LD tol = entry_tolerance<T>(expected, i);
    if (!(std::fabs(got - want) <= tol)) {
      return ::testing::AssertionFailure()
             << "p[" << i << "] = " << static_cast<double>(got) << ", reference "
             << static_cast<double>(want) << " (error " << static_cast<double>(std::fabs(got - want))
             << " > tolerance " << static_cast<double>(tol) << ")";
    }
  }
  if (check_tau) {
    const LD want = expected.tau;
    const LD got = tau;
    const LD tol = map_tolerance<T>() * (1 + std::fabs(want));
    const bool ok = std::isinf(want) ? got == want : std::fabs(got - want) <= tol;
    if (!ok) {
      return ::testing::AssertionFailure()
             << "tau = " << static_cast<double>(got) << ", reference " << static_cast<double>(want);
    }
  }
  return ::testing::AssertionSuccess();
}

/// Checks every row of a batch against the reference, with per-row parameters.
template <class T>
void expect_batch_matches(sparcon::Map map, const std::vector<T>& parameters, const std::vector<T>& x,
                          sparcon::Rows rows, const Forward<T>& got,
                          const std::vector<std::string>& row_names = {}) {
  const bool check_tau = map != sparcon::Map::budget;
  for (std::size_t r = 0; r < rows.count; ++r) {
    const std::vector<LD> xr = promote(row_of(x, rows, r));
    const ref::Result expected =
        reference_row(map, static_cast<LD>(parameters[parameters.size() == 1 ? 0 : r]), xr);
    EXPECT_TRUE(row_matches<T>(row_of(got.p, rows, r), got.tau[r], expected, check_tau))
        << case_name(map, static_cast<double>(parameters[parameters.size() == 1 ? 0 : r])) << ", row " << r
        << (row_names.empty() ? "" : " (" + row_names[r] + ")") << ", length " << rows.length;
  }
}

}  // namespace sparcon_test
