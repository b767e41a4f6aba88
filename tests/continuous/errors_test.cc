// Bad arguments of the continuous API throw std::invalid_argument whose message names the
// argument (and, where there is one, its value).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "continuous_cases.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

template <class T>
class ContinuousErrors : public ::testing::Test {};
TYPED_TEST_SUITE(ContinuousErrors, FloatTypes);

TYPED_TEST(ContinuousErrors, DensityArguments) {
  using T = TypeParam;
  using D = sparcon::Density1D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  EXPECT_TRUE(throws_naming([&] { D(T(0.5), T(0), T(1)); }, {"alpha", "0.5"}));
  EXPECT_TRUE(throws_naming([&] { D(T(-2), T(0), T(1)); }, {"alpha", "-2"}));
  EXPECT_TRUE(throws_naming([&] { D(nan, T(0), T(1)); }, {"alpha", "nan"}));
  EXPECT_TRUE(throws_naming([&] { D(inf, T(0), T(1)); }, {"alpha"}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), T(0), T(0)); }, {"sigma2", "0"}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), T(0), T(-3)); }, {"sigma2", "-3"}));
  EXPECT_TRUE(throws_naming([&] { D(T(1), T(0), nan); }, {"sigma2", "nan"}));
  EXPECT_TRUE(throws_naming([&] { D(T(2), T(0), inf); }, {"sigma2"}));
  EXPECT_TRUE(throws_naming([&] { D(T(2), nan, T(1)); }, {"mu", "nan"}));
  EXPECT_TRUE(throws_naming([&] { D(T(2), -inf, T(1)); }, {"mu"}));
}

TYPED_TEST(ContinuousErrors, WithVarianceArguments) {
  using T = TypeParam;
  using D = sparcon::Density1D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  EXPECT_TRUE(throws_naming([&] { D::with_variance(T(0.75), T(0), T(1)); }, {"alpha", "0.75"}));
  EXPECT_TRUE(throws_naming([&] { D::with_variance(nan, T(0), T(1)); }, {"alpha"}));
  EXPECT_TRUE(throws_naming([&] { D::with_variance(T(2), nan, T(1)); }, {"mu"}));
  // the argument is called `variance`: the message must name it (not only the function's name)
  EXPECT_TRUE(throws_naming([&] { D::with_variance(T(2), T(0), T(-1)); }, {"variance = -1"}));
  EXPECT_TRUE(throws_naming([&] { D::with_variance(T(1), T(0), T(0)); }, {"variance = 0"}));
  EXPECT_TRUE(throws_naming([&] { D::with_variance(T(1.5), T(0), nan); }, {"variance = nan"}));
}

TYPED_TEST(ContinuousErrors, ExpectationArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const auto basis = sparcon::GaussianBasis1D<T>::paper(4);
  std::vector<T> mu{T(0.2), T(0.6)}, s2{T(0.1), T(0.3)}, s2_3{T(0.1), T(0.3), T(1)}, r(8), r7(7), r9(9);
  auto fwd = [&](T alpha, std::vector<T>& m, std::vector<T>& s, std::vector<T>& out,
                 const sparcon::GaussianBasis1D<T>& bs) {
    return [&, alpha] { sparcon::expectation_1d<T>(alpha, std::span<const T>(m), std::span<const T>(s), bs, std::span<T>(out)); };
  };
  EXPECT_TRUE(throws_naming(fwd(T(0.875), mu, s2, r, basis), {"alpha", "0.875"}));
  EXPECT_TRUE(throws_naming(fwd(nan, mu, s2, r, basis), {"alpha", "nan"}));
  std::vector<T> s2_zero{T(0.1), T(0)}, s2_nan{nan, T(0.3)}, mu_nan{T(0.2), nan};
  EXPECT_TRUE(throws_naming(fwd(T(1.5), mu, s2_zero, r, basis), {"sigma2", "0"}));
  EXPECT_TRUE(throws_naming(fwd(T(2), mu, s2_nan, r, basis), {"sigma2", "nan"}));
  EXPECT_TRUE(throws_naming(fwd(T(1), mu_nan, s2, r, basis), {"mu", "nan"}));
  EXPECT_TRUE(throws_naming(fwd(T(1.5), mu, s2_3, r, basis), {"sigma2", "3"}));
  EXPECT_TRUE(throws_naming(fwd(T(1.5), mu, s2, r7, basis), {"r", "7"}));
  EXPECT_TRUE(throws_naming(fwd(T(2), mu, s2, r9, basis), {"r", "9"}));
  const sparcon::GaussianBasis1D<T> empty;
  std::vector<T> r0;
  EXPECT_TRUE(throws_naming(fwd(T(1.5), mu, s2, r0, empty), {"basis"}));
}

TYPED_TEST(ContinuousErrors, BackwardArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const auto basis = sparcon::GaussianBasis1D<T>::paper(4);
  std::vector<T> mu{T(0.2), T(0.6)}, s2{T(0.1), T(0.3)}, g(8, T(1)), g7(7, T(1)), dmu(2), dmu3(3), ds(2), ds1(1);
  auto bwd = [&](T alpha, std::vector<T>& m, std::vector<T>& s, std::vector<T>& gg, std::vector<T>& dm,
                 std::vector<T>& dss, const sparcon::GaussianBasis1D<T>& bs) {
    return [&, alpha] {
      sparcon::expectation_1d_backward<T>(alpha, std::span<const T>(m), std::span<const T>(s), bs, std::span<const T>(gg),
                                          std::span<T>(dm), std::span<T>(dss));
    };
  };
  EXPECT_TRUE(throws_naming(bwd(T(0.5), mu, s2, g, dmu, ds, basis), {"alpha", "0.5"}));
  EXPECT_TRUE(throws_naming(bwd(nan, mu, s2, g, dmu, ds, basis), {"alpha", "nan"}));
  std::vector<T> s2_neg{T(-0.125), T(0.3)}, s2_nan{T(0.1), nan}, mu_nan{nan, T(0.6)}, s2_1{T(0.1)};
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2_neg, g, dmu, ds, basis), {"sigma2", "-0.125"}));
  EXPECT_TRUE(throws_naming(bwd(T(2), mu, s2_nan, g, dmu, ds, basis), {"sigma2", "nan"}));
  EXPECT_TRUE(throws_naming(bwd(T(1), mu_nan, s2, g, dmu, ds, basis), {"mu", "nan"}));
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2_1, g, dmu, ds, basis), {"sigma2", "1"}));
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2, g7, dmu, ds, basis), {"g", "7"}));
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2, g, dmu3, ds, basis), {"dmu", "3"}));
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2, g, dmu, ds1, basis), {"dsigma2", "1"}));
  const sparcon::GaussianBasis1D<T> empty;
  std::vector<T> g0;
  EXPECT_TRUE(throws_naming(bwd(T(1.5), mu, s2, g0, dmu, ds, empty), {"basis"}));
}

TYPED_TEST(ContinuousErrors, BasisArguments) {
  using T = TypeParam;
  using Basis = sparcon::GaussianBasis1D<T>;
  EXPECT_TRUE(throws_naming([] { (void)Basis::paper(3); }, {"n", "3"}));
  EXPECT_TRUE(throws_naming([] { (void)Basis::paper(127); }, {"n", "127"}));
  // a basis whose centres and widths disagree in size, or with a width <= 0, is rejected (the
  // header does not say so explicitly; anything else would read out of bounds or divide by 0)
  std::vector<T> mu{T(0.2)}, s2{T(0.1)}, r(3);
  Basis ragged{{T(0), T(0.5), T(1)}, {T(0.01), T(0.01)}};
  EXPECT_TRUE(throws_naming([&] { sparcon::expectation_1d<T>(T(1.5), mu, s2, ragged, r); }, {"widths"}));
  Basis zero_width{{T(0), T(0.5), T(1)}, {T(0.01), T(0), T(0.01)}};
  EXPECT_TRUE(throws_naming([&] { sparcon::expectation_1d<T>(T(2), mu, s2, zero_width, r); }, {"widths"}));
}

}  // namespace
}  // namespace sparcon_test
