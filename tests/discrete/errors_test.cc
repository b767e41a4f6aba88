// Bad arguments throw std::invalid_argument whose message names the argument and its value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparcon/discrete.h"
#include "sparcon/losses.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using ::testing::HasSubstr;

template <class T>
class Errors : public ::testing::Test {};
TYPED_TEST_SUITE(Errors, FloatTypes);

TYPED_TEST(Errors, WrongSpanSizes) {
  using T = TypeParam;
  using F = sparcon::Family<T>;
  const sparcon::Rows rows{3, 4};  // 12 entries
  std::vector<T> x(12, T(0.5)), x13(13, T(0.5)), p(12), p11(11), tau2(2), g(12, T(1)), g13(13, T(1)), dx(12),
      dx11(11), dalpha(3), dalpha4(4);
  auto fwd = [&](std::vector<T>& xs, std::vector<T>& ps, std::span<T> tau) {
    return [&, tau] { sparcon::forward<T>(F::sparsemax(), std::span<const T>(xs), std::span<T>(ps), rows, {}, tau); };
  };
  EXPECT_TRUE(throws_naming(fwd(x13, p, {}), {"x", "13"}));
  EXPECT_TRUE(throws_naming(fwd(x, p11, {}), {"p", "11"}));
  EXPECT_TRUE(throws_naming(fwd(x, p, std::span<T>(tau2)), {"tau", "2"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::backward<T>(F::entmax15(), std::span<const T>(x13), g, std::span<T>(dx), rows); },
                            {"p", "13"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::backward<T>(F::entmax15(), x, std::span<const T>(g13), std::span<T>(dx), rows); },
                            {"g", "13"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::backward<T>(F::entmax15(), x, g, std::span<T>(dx11), rows); }, {"dx", "11"}));
  EXPECT_TRUE(throws_naming(
      [&] { sparcon::entmax_alpha_backward<T>(x, g, std::span<T>(dalpha4), rows, T(1.5)); }, {"dalpha", "4"}));
  // losses: target and loss have rows.count entries, grad rows.size() (or none)
  const std::vector<std::int64_t> target = {0, 1, 2}, target2 = {0, 1};
  std::vector<T> loss(3), loss5(5), grad(12), grad7(7);
  EXPECT_TRUE(throws_naming([&] {
    sparcon::fenchel_young_loss<T>(F::sparsemax(), x, target2, std::span<T>(loss), std::span<T>(grad), rows);
  }, {"target", "2"}));
  EXPECT_TRUE(throws_naming([&] {
    sparcon::fenchel_young_loss<T>(F::sparsemax(), x, target, std::span<T>(loss5), std::span<T>(grad), rows);
  }, {"loss", "5"}));
  EXPECT_TRUE(throws_naming([&] {
    sparcon::fenchel_young_loss<T>(F::sparsemax(), x, target, std::span<T>(loss), std::span<T>(grad7), rows);
  }, {"grad", "7"}));
}

TYPED_TEST(Errors, BadParameters) {
  using T = TypeParam;
  using F = sparcon::Family<T>;
  const sparcon::Rows rows{2, 4};
  std::vector<T> x(8, T(0.5)), p(8), g(8, T(1)), dx(8), dalpha(2);
  auto fwd = [&](const sparcon::Family<T>& family) {
    return [&, family] { sparcon::forward<T>(family, x, std::span<T>(p), rows); };
  };
  EXPECT_TRUE(throws_naming(fwd(F::entmax(T(-1))), {"alpha", "-1"}));
  EXPECT_TRUE(throws_naming(fwd(F::entmax(T(0))), {"alpha", "0"}));
  EXPECT_TRUE(throws_naming(fwd(F::normmax(T(1))), {"alpha", "1"}));
  EXPECT_TRUE(throws_naming(fwd(F::normmax(T(0.5))), {"alpha", "0.5"}));
  EXPECT_TRUE(throws_naming(fwd(F::budget(T(0))), {"budget", "0"}));
  EXPECT_TRUE(throws_naming(fwd(F::budget(T(-2))), {"budget", "-2"}));
  EXPECT_TRUE(throws_naming(fwd(F::budget(T(5))), {"budget", "5"}));  // > length 4
  EXPECT_TRUE(throws_naming([&] { sparcon::backward<T>(F::entmax(T(-1)), x, g, std::span<T>(dx), rows); },
                            {"alpha", "-1"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::entmax_alpha_backward<T>(x, g, std::span<T>(dalpha), rows, T(-3)); },
                            {"alpha", "-3"}));
  // a bad value among per-row values
  const std::vector<T> alphas = {T(1.5), T(-1)};
  EXPECT_TRUE(throws_naming(fwd(F::entmax(std::span<const T>(alphas))), {"alpha", "-1"}));
}

TYPED_TEST(Errors, PerRowParameterOfWrongSize) {
  using T = TypeParam;
  using F = sparcon::Family<T>;
  const sparcon::Rows rows{3, 4};
  std::vector<T> x(12, T(0.5)), p(12), g(12, T(1)), dx(12), dalpha(3);
  const std::vector<T> two = {T(1.5), T(2)};
  EXPECT_TRUE(throws_naming([&] { sparcon::forward<T>(F::entmax(std::span<const T>(two)), x, std::span<T>(p), rows); },
                            {"alpha", "2"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::forward<T>(F::normmax(std::span<const T>(two)), x, std::span<T>(p), rows); },
                            {"alpha", "2"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::forward<T>(F::budget(std::span<const T>(two)), x, std::span<T>(p), rows); },
                            {"budget", "2"}));
  EXPECT_TRUE(throws_naming([&] { sparcon::backward<T>(F::entmax(std::span<const T>(two)), x, g, std::span<T>(dx), rows); },
                            {"alpha", "2"}));
  EXPECT_TRUE(throws_naming(
      [&] { sparcon::entmax_alpha_backward<T>(x, g, std::span<T>(dalpha), rows, std::span<const T>(two)); },
      {"alpha", "2"}));
}

TYPED_TEST(Errors, PartialOverlapIsRejected) {
  using T = TypeParam;
  const sparcon::Rows rows{2, 4};
  std::vector<T> buffer(9, T(0.5));
  const std::span<T> all(buffer);
  EXPECT_THROW(sparcon::forward<T>(sparcon::Family<T>::sparsemax(), std::span<const T>(all.subspan(0, 8)),
                                   all.subspan(1, 8), rows),
               std::invalid_argument);
  EXPECT_THROW(sparcon::forward<T>(sparcon::Family<T>::softmax(), std::span<const T>(all.subspan(1, 8)),
                                   all.subspan(0, 8), rows),
               std::invalid_argument);
  std::vector<T> p(8, T(0.125));
  EXPECT_THROW(sparcon::backward<T>(sparcon::Family<T>::entmax15(), p, std::span<const T>(all.subspan(0, 8)),
                                    all.subspan(1, 8), rows),
               std::invalid_argument);
  // dx overlapping p (not g) is also an overlap that is not exact aliasing of g
  std::vector<T> g(8, T(1));
  EXPECT_THROW(sparcon::backward<T>(sparcon::Family<T>::entmax15(), std::span<const T>(all.subspan(0, 8)), g,
                                    all.subspan(1, 8), rows),
               std::invalid_argument);
}

}  // namespace
}  // namespace sparcon_test
