// What the C++ test suites share (tests/discrete, tests/continuous, tests/torch): the float
// types of the typed tests, the check that a bad call throws an exception whose message names
// the argument, and finite differences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sparcon_test {

/// The element types every typed suite runs over.
using FloatTypes = ::testing::Types<float, double>;

inline bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// Whether `needle` occurs in `text`; a needle that is an identifier (an argument's name) must
/// occur as a whole word ("r" is not found in "sparcon", but is in "...: r has 7 entries").
inline bool contains(const std::string& text, const std::string& needle) {
  const bool identifier = !needle.empty() && std::isalpha(static_cast<unsigned char>(needle[0])) != 0 &&
                          std::all_of(needle.begin(), needle.end(), is_word_char);
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    if (!identifier) return true;
    const bool left = at == 0 || !is_word_char(text[at - 1]);
    const bool right = at + needle.size() == text.size() || !is_word_char(text[at + needle.size()]);
    if (left && right) return true;
  }
  return false;
}

/// One thing a message must name: a word ("alpha"), or any one of alternatives
/// ({"sigma", "Sigma"}).
struct Needle {
  Needle(const char* word) : alternatives{word} {}                              // NOLINT: implicit
  Needle(std::string word) : alternatives{std::move(word)} {}                   // NOLINT: implicit
  Needle(std::initializer_list<std::string> any_of) : alternatives(any_of) {}   // NOLINT: implicit
  Needle(std::vector<std::string> any_of) : alternatives(std::move(any_of)) {}  // NOLINT: implicit
  std::vector<std::string> alternatives;
};

/// Runs `call`, expecting an `Exception` (std::invalid_argument unless told) whose message
/// names every needle: throws_naming(call, {"alpha", "0.5"}), throws_naming(call, {{"h", "height"}}).
template <class Exception = std::invalid_argument>
::testing::AssertionResult throws_naming(const std::function<void()>& call, const std::vector<Needle>& needles) {
  try {
    call();
  } catch (const Exception& e) {
    const std::string what = e.what();
    for (const Needle& needle : needles) {
      const auto& any = needle.alternatives;
      if (std::none_of(any.begin(), any.end(), [&](const std::string& n) { return contains(what, n); })) {
        std::string list;
        for (const std::string& n : any) list += (list.empty() ? "\"" : " or \"") + n + "\"";
        return ::testing::AssertionFailure() << "message \"" << what << "\" lacks " << list;
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// n draws of N(0, 1) from std::mt19937(seed) (upstream gradients of the backward tests).
inline std::vector<double> normal_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

/// n draws of U(-1, 1) from std::mt19937(seed).
inline std::vector<double> uniform_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

/// f'(0) by the central difference (f(h) - f(-h)) / (2 h).
template <class F>
double central_difference(F&& f, double h) {
  return (f(h) - f(-h)) / (2 * h);
}

/// f'(0) by the five-point central difference (error O(h^4)).
template <class F>
double five_point_difference(F&& f, double h) {
  return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h);
}

/// d loss() / d v by the five-point difference: v moved by +-h and +-2h, restored after each.
template <class F>
double five_point_derivative(F&& loss, double& v, double h) {
  const double v0 = v;
  return five_point_difference(
      [&](double d) {
        v = v0 + d;
        const double f = loss();
        v = v0;
        return f;
      },
      h);
}

}  // namespace sparcon_test
