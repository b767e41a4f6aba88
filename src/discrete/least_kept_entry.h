// The float rows of a general power write p from the powers their Newton steps kept
// (simd_kernels-inl.h, WritePowerColumn); the entries those steps kept are the candidates
// x > threshold whose y = x - max, formed in double, is at or above the least kept y. This finds
// the least such x, so that the write keeps the entries x >= it with one comparison a vector.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace sparcon::detail {

/// The least x of type T with x > threshold and double(x) - double(max) >= lowest, for
/// threshold < max and lowest <= 0 (so that x = max passes). Both tests are monotone in x (the
/// subtraction's rounding is), so the entries that pass both are exactly those x >= the result;
/// note that this is not max + lowest rounded to T when the subtraction rounds (x tiny beside
/// max: max = 8, lowest = -8 keeps every x > threshold near 0). A bisection over the order of
/// T's values in (threshold, max], started from max + lowest rounded and its neighbours: two or
/// three tests where that guess is right or an ulp off, about 32 (float) or 64 (double) else.
template <std::floating_point T>
T least_kept_entry(T threshold, T max, double lowest) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr U kSign = U{1} << (8 * sizeof(T) - 1);
  // Keys in the order of the values: the sign bit set for x >= +0, every bit flipped for
  // x <= -0. -0 is taken as +0 (a threshold of -0 keeps no zero).
  auto key = [](T v) {
    const U bits = std::bit_cast<U>(v == 0 ? T(0) : v);
    return (bits & kSign) ? static_cast<U>(~bits) : static_cast<U>(bits | kSign);
  };
  auto value = [](U k) {
    return std::bit_cast<T>((k & kSign) ? static_cast<U>(k & ~kSign) : static_cast<U>(~k));
  };
  auto kept = [&](U k) {
    return static_cast<double>(value(k)) - static_cast<double>(max) >= lowest;
  };
  if (!(threshold < max)) return max;       // outside the contract: max alone
  U below = key(threshold), at = key(max);  // the result lies in (below, at]
  const U guess = key(static_cast<T>(static_cast<double>(max) + lowest));
  if (guess > below && guess < at) (kept(guess) ? at : below) = guess;
  if (at - below > 1 && kept(below + 1)) at = below + 1;
  if (at - below > 1 && !kept(at - 1)) below = at - 1;
  while (at - below > 1) {
    const U middle = below + (at - below) / 2;
    (kept(middle) ? at : below) = middle;
  }
  return value(at);
}

}  // namespace sparcon::detail
