// Pow(d, x, e) = x^e for vectors of float or double, shared by the discrete kernels' weights and
// threshold sums (discrete/simd_kernels-inl.h). Included once per target, inside no namespace.
//
// Why not hn::Exp(d, e * hn::Log(d, x)): rounding e log x to the working type moves the result
// by |e log x| ulps of the argument, up to 116 float ulps for x near 1e-38 (measured against
// long double); Log's division and the two functions' separate range reductions also make it
// 1.4-1.6x slower (AVX-512, one thread). Here the power is taken in base 2 with the exponent
// split off exactly:
//   x = 2^E m,  m in [sqrt(1/2), sqrt(2)),  log2 x = E + L,  L = log2(1 + t) = t P(t),  t = m - 1,
//   y = e E + e L = hi + low,  hi = e_hi E exactly (e_hi: e's leading bits),  low = e_lo E + e L,
//   n = round(y),  f = (hi - n) + low  in [-1/2, 1/2],  x^e = 2^n 2^f,
// 2^f = Q(f). P and Q are near-minimax polynomials (Lawson's iteration in 80 digits; |t P(t) -
// log2(1 + t)| <= 6.7e-9 and |Q(f) / 2^f - 1| <= 1.9e-9 for float, 1.2e-17 and 3.1e-18 for
// double). hi - n is exact (Sterbenz) where |hi| >= 1 and within an ulp of f otherwise, so the
// error no longer grows with |log2 x|, only with |e| (through e L): at most 2.5 ulps, plus 0.2
// per unit of |e|, in float and double over the whole range (measured 1.7-2.5 ulps for |e| <=
// 2.5 in float, 3.4 for e = 6.5 in double; tests/discrete/simd_targets_test.cc, every target,
// against powl).
//
// Domain: 0 < x < inf (subnormal x included; callers mask zeros, negatives and infinities),
// e finite. Results below the smallest subnormal are 0, above the largest finite +inf.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_POW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_POW_INL_H_
#undef SPARCON_POW_INL_H_
#else
#define SPARCON_POW_INL_H_
#endif

#include <bit>
#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

// The constants of Pow for one floating type.
template <class T>
struct PowTraits;

template <>
struct PowTraits<float> {
  using Bits = std::int32_t;
  static constexpr int kMantissaBits = 23;
  static constexpr Bits kBias = 127;
  static constexpr Bits kSqrtHalfBits = 0x3F3504F3;  // sqrt(1/2) rounded down
  static constexpr int kSubnormalExponent = -149;    // a subnormal is its bits times 2^-149
  static constexpr float kMinNormal = 1.17549435e-38F;
  static constexpr float kRoundingMagic = 12582912.0F;  // 1.5 2^23: adding it rounds to integers
  static constexpr float kMaxExponent = 254;            // 2^n in two normal factors
  // log2(1 + t) / t, ascending powers of t.
  static constexpr float kLog2[] = {1.442694868532414F,    -0.7213471285694904F, 0.4809225311949010F,
                                    -0.3607211863667519F,  0.2876566143153738F,  -0.2385196137212646F,
                                    0.2173800652270939F,   -0.2103023537894865F, 0.1254095021744215F};
  // 2^f, ascending powers of f.
  static constexpr float kExp2[] = {1.000000000554213F,    0.6931472057371113F,   0.2402264689028914F,
                                    0.05550328777217318F,  0.009618488994450949F, 0.001339993113823340F,
                                    0.0001534580195974370F};
};

template <>
struct PowTraits<double> {
  using Bits = std::int64_t;
  static constexpr int kMantissaBits = 52;
  static constexpr Bits kBias = 1023;
  static constexpr Bits kSqrtHalfBits = 0x3FE6A09E667F3BCC;
  static constexpr int kSubnormalExponent = -1074;
  static constexpr double kMinNormal = 2.2250738585072014e-308;
  static constexpr double kRoundingMagic = 6755399441055744.0;  // 1.5 2^52
  static constexpr double kMaxExponent = 2046;
  static constexpr double kLog2[] = {
      1.442695040888964060269953,    -0.7213475204444793725859265, 0.4808983469625764875478193,
      -0.3606737602227725840500824,  0.2885390082526093260026259,  -0.2404491734765917649696761,
      0.206099285388200816039437,    -0.1803368749930465421588523, 0.1602997227202769181967048,
      -0.1442699369383661250859183,  0.1311470907400112637354923,  -0.1202085302139531105226399,
      0.1110795581011579156262986,   -0.1033700479361044343993288, 0.09540246288027443747830788,
      -0.08664761638019372746883752, 0.08624479643833407006167194, -0.09940751061362919131706481,
      0.0924962439620938804720163,   -0.04078549585965116017125327};
  static constexpr double kExp2[] = {
      0.9999999999999999971004078,      0.6931471805599453304625511,   0.2402265069591015620438243,
      0.05550410866481992138979209,     0.009618129107588335144122603, 0.001333355814678997177411818,
      0.0001540353046251455057889796,   0.00001525273348994081841524768,
      0.000001321543308962121845566221, 0.000000101781980414454429421313,
      7.074105622202509268050205e-9,    4.435279748936276572928946e-10};
};

// sum_j c[j] t^j, as the even and the odd powers by Horner's rule in t^2 (two chains of half
// the length, which the CPU overlaps) joined by one fused multiply-add.
template <std::size_t kCount, class D, class V = hwy::HWY_NAMESPACE::Vec<D>, class T>
HWY_INLINE V EvenOddPolynomial(D d, V t, const T (&c)[kCount]) {
  namespace hn = hwy::HWY_NAMESPACE;
  const V t2 = hn::Mul(t, t);
  constexpr std::size_t kLastEven = (kCount - 1) & ~std::size_t{1};
  constexpr std::size_t kLastOdd = kCount % 2 == 0 ? kCount - 1 : kCount - 2;
  V even = hn::Set(d, c[kLastEven]);
  for (std::size_t j = kLastEven; j >= 2; j -= 2) even = hn::MulAdd(even, t2, hn::Set(d, c[j - 2]));
  V odd = hn::Set(d, c[kLastOdd]);
  for (std::size_t j = kLastOdd; j >= 3; j -= 2) odd = hn::MulAdd(odd, t2, hn::Set(d, c[j - 2]));
  return hn::MulAdd(odd, t, even);
}

// The bits of T's 2^n for whole n in [1 - bias, bias] held in a vector of T: n + 1.5 2^m (m the
// mantissa bits) holds n in its low bits, exactly, so those bits minus the constant's are n.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V PowerOfTwo(D d, V n) {
  namespace hn = hwy::HWY_NAMESPACE;
  using P = PowTraits<hn::TFromD<D>>;
  const hn::RebindToSigned<D> di;
  constexpr typename P::Bits kMagicBits = std::bit_cast<typename P::Bits>(P::kRoundingMagic);
  const auto biased = hn::Sub(hn::BitCast(di, hn::Add(n, hn::Set(d, P::kRoundingMagic))),
                              hn::Set(di, kMagicBits - P::kBias));
  return hn::BitCast(d, hn::ShiftLeft<P::kMantissaBits>(biased));
}

// x^e; see the top of this file for the method, domain and accuracy.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V Pow(D d, V x, V e) {
  namespace hn = hwy::HWY_NAMESPACE;
  using T = hn::TFromD<D>;
  using P = PowTraits<T>;
  using Bits = typename P::Bits;
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;  // shifted is never negative: its logical shift is cheaper
  const V magic = hn::Set(d, P::kRoundingMagic);
  // A subnormal x is its bits times 2^kSubnormalExponent: those bits, converted (exactly), are
  // a normal number to take apart instead, with no arithmetic on subnormals (which some CPUs
  // take a slow path for).
  V shift = hn::Zero(d);
  const auto subnormal = hn::Lt(x, hn::Set(d, P::kMinNormal));
  if (HWY_UNLIKELY(!hn::AllFalse(d, subnormal))) {
    x = hn::IfThenElse(subnormal, hn::ConvertTo(d, hn::BitCast(di, x)), x);
    shift = hn::IfThenElseZero(subnormal, hn::Set(d, T(P::kSubnormalExponent)));
  }
  // x = 2^E m with m in [sqrt(1/2), sqrt(2)): the bits of x plus those of 1 minus those of
  // sqrt(1/2) carry E + bias above the mantissa, whose bits plus sqrt(1/2)'s are m's.
  constexpr Bits kOneBits = P::kBias << P::kMantissaBits;
  constexpr Bits kMantissaMask = (Bits{1} << P::kMantissaBits) - 1;
  const auto shifted = hn::Add(hn::BitCast(di, x), hn::Set(di, kOneBits - P::kSqrtHalfBits));
  const V m = hn::BitCast(d, hn::Add(hn::And(shifted, hn::Set(di, kMantissaMask)),
                                     hn::Set(di, P::kSqrtHalfBits)));
  // E as a T: the biased exponent added to magic's low bits, minus magic and the bias.
  constexpr Bits kMagicBits = std::bit_cast<Bits>(P::kRoundingMagic);
  const V exponent = hn::Add(
      hn::Sub(hn::BitCast(d, hn::Add(hn::BitCast(di, hn::ShiftRight<P::kMantissaBits>(hn::BitCast(du, shifted))), hn::Set(di, kMagicBits))),
              hn::Set(d, P::kRoundingMagic + T(P::kBias))),
      shift);
  const V t = hn::Sub(m, hn::Set(d, T(1)));  // exact
  const V log2_m = hn::Mul(t, EvenOddPolynomial(d, t, P::kLog2));
  // y = e E + e L = hi + low with hi = e_hi E exact: e_hi is e to its leading mantissa bits,
  // as many as E (at most 11 bits) leaves room for, so no rounding (and no fused
  // multiply-add the compiler may form) can move hi; e_lo = e - e_hi is exact too.
  constexpr Bits kLowBits = (Bits{1} << (P::kMantissaBits == 23 ? 8 : 11)) - 1;
  const V e_hi = hn::And(e, hn::BitCast(d, hn::Set(di, ~kLowBits)));
  const V hi = hn::Mul(e_hi, exponent);
  const V low = hn::MulAdd(e, log2_m, hn::Mul(hn::Sub(e, e_hi), exponent));
  const V y = hn::Min(hn::Max(hn::Add(hi, low), hn::Set(d, -P::kMaxExponent)),
                      hn::Set(d, P::kMaxExponent));
  const V n = hn::Sub(hn::Add(y, magic), magic);  // round to nearest
  // f in [-1/2, 1/2], or out of range where y was clamped (where 2^n makes the result 0 or
  // inf): kept to [-1, 1] there, so that Q(f) stays finite.
  const V f = hn::Min(hn::Max(hn::Add(hn::Sub(hi, n), low), hn::Set(d, T(-1))), hn::Set(d, T(1)));
  // 2^n as two normal factors, so that a result near the subnormals is rounded once.
  const V half = hn::Sub(hn::Add(hn::Mul(n, hn::Set(d, T(0.5))), magic), magic);
  return hn::Mul(hn::Mul(EvenOddPolynomial(d, f, P::kExp2), PowerOfTwo(d, half)),
                 PowerOfTwo(d, hn::Sub(n, half)));
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
