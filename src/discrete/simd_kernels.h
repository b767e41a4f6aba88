// The SIMD row kernels of the discrete core, written in simd_kernels-inl.h, compiled for every
// Highway target and chosen at run time (simd_kernels.cc). Each works on one row; the row-level
// algorithms that call them live in forward.cc and backward.cc. T is float or double.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sparcon::simd {

/// State of the single read pass that finds the row maximum and collects every entry that can
/// be in the support: an entry is a candidate when x > max(running_max - gap, floor). `gap` is
/// the distance below the maximum beyond which no entry is in the support (1/(alpha-1) for
/// entmax); `floor` is a proven lower bound of the threshold found by pruning.
/// More lanes than any vector of any target holds.
inline constexpr std::size_t kMaxLanes = 256;

template <class T>
struct CandidateScan {
  const T* x = nullptr;
  std::size_t length = 0;
  std::size_t position = 0;  ///< next entry to read; the scan returns at `length` or when full
  T running_max;             ///< max of x[0, position), -inf at the start
  double gap;  ///< 1/a: the candidates lie above candidate_threshold(running_max, gap, floor)
  T floor;
  T* buffer = nullptr;        ///< candidate values, in row order
  std::size_t count = 0;      ///< candidates in buffer
  std::size_t capacity = 0;   ///< buffer size; the scan stops before count could pass it
  bool not_finite = false;    ///< set (and the scan stops) on a NaN or +inf entry
};

/// How the write pass turns a row x into p, with y = x - shift:
enum class WriteKind {
  linear,       ///< p = [a y + c]_+                      (sparsemax)
  square,       ///< p = [a y + c]_+^2                    (entmax-1.5)
  power,        ///< p = scale [a y + c]_+^k from exact_a, exact_offset, exact_k (u in double),
                ///< by Pow (pow-inl.h) in T   (entmax, other alpha with k <= 10; normmax)
  power_near_one, ///< p = exp(k log1p(a (y - lambda))) where a (y - lambda) > -1, else 0
                ///< (entmax, |alpha - 1| < 0.1: k > 10 would amplify the rounding of c)
  offset_power, ///< p = [a y + c]_+^k (entmax, alpha > 2): by Pow (pow-inl.h) in double rows;
                ///< float rows take the vectors that may hold support entries per lane, in
                ///< double from the exact offset
  integer_power,///< p = [a y + c]_+^k for k = 3, 4 in double from exact_a, exact_offset, exact_k
                ///< (entmax, alpha = 5/4, or any alpha with 1/(alpha - 1) exactly 3 or 4):
                ///< products, no exp or log
  exponential,  ///< p = exp(y - lambda)                  (softmax)
  clip,         ///< p = clip(y - lambda, 0, 1)           (budget)
};

template <class T>
struct WriteParams {
  WriteKind kind;
  T shift;          ///< usually the row maximum, subtracted first so that y is exact near it
  T a = 1, c = 0;   ///< linear, square, offset_power
  T lambda = 0;     ///< power_near_one, exponential, clip
  T k = 1;          ///< power_near_one, offset_power
  /// power, integer_power, and offset_power in float rows: a, c and k in double (offset_power
  /// recomputes the entries near the support boundary in double from them).
  double exact_a = 1, exact_offset = 0, exact_k = 1;
  double scale = 1;  ///< power (normmax's 1 / Z)
};

/// Within this distance of alpha = 1 (|a| < kNearOneA, k > 10) the powers u^k of entmax go through
/// exp(k log1p(a (y - lambda))) (PowerSumParams::near_one, WriteKind::power_near_one) where their
/// rounding matters: u = 1 - a lambda + a y rounded would be amplified k times.
inline constexpr double kNearOneA = 0.1;

/// How entmax's p_i = [a y_i + offset]_+^k (y = x - max, a = alpha - 1, k = 1/a) is written:
/// k = 1, 2 linear and square, 3 and 4 integer_power, k < 1 (alpha > 2) offset_power, within 0.1
/// of alpha = 1 power_near_one for double rows (there k > 10 would amplify the rounding of the
/// offset; float rows lose nothing to it), power otherwise.
template <class T>
WriteKind EntmaxWriteKind(double a, double k) {
  return k == 1                                                 ? WriteKind::linear
         : k == 2                                               ? WriteKind::square
         : k == 3 || k == 4                                     ? WriteKind::integer_power
         : k > 0 && k < 1                                       ? WriteKind::offset_power
         : std::abs(a) < kNearOneA && std::is_same_v<T, double> ? WriteKind::power_near_one
                                                                : WriteKind::power;
}

/// How the backward pass weighs entries: s_i, a function of p_i.
enum class WeightKind {
  support,     ///< s = 1 where p > 0     (sparsemax)
  interior,    ///< s = 1 where 0 < p < 1 (budget)
  identity,    ///< s = p                 (softmax)
  sqrt,        ///< s = sqrt(p)           (entmax-1.5)
  quarter,     ///< s = p^e where p > 0, e = 1/4 or 3/4, by square roots (entmax-1.75, 1.25)
  reciprocal,  ///< s = 1/p where p > 0   (entmax-3)
  power,       ///< s = p^e where p > 0   (entmax, normmax)
};

template <class T>
struct Weights {
  WeightKind kind;
  T e = 1;  ///< exponent for WeightKind::quarter and WeightKind::power
};

/// Whether a row taken a call per pass (rows longer than centered_rows takes in groups) keeps its
/// weights from the sums for the centring rather than computing them again: those that cost a
/// power or two square roots per entry.
constexpr bool KeepsWeightsPerRow(WeightKind kind) {
  return kind == WeightKind::power || kind == WeightKind::quarter;
}

/// The weights s = p^(2 - alpha) of entmax with this alpha, the cheapest kind that is exact.
template <class T>
Weights<T> EntmaxWeights(double alpha) {
  if (alpha == 1) return {WeightKind::identity};
  if (alpha == 2) return {WeightKind::support};
  if (alpha == 1.5) return {WeightKind::sqrt};
  if (alpha == 1.25 || alpha == 1.75) return {WeightKind::quarter, static_cast<T>(2 - alpha)};
  if (alpha == 3) return {WeightKind::reciprocal};
  return {WeightKind::power, static_cast<T>(2 - alpha)};
}

/// Sums for the backward pass: sum_i s_i g_i and sum_i s_i, in double, and the largest s_i
/// (kept for the weights of alpha > 2 only, which have no bound; 0 for the others).
struct WeightedSums {
  double sg = 0;
  double s = 0;
  double largest = 0;
};

/// The sums of the alpha gradient's direct form over one row's support (p > 0, alpha_gradient.cc):
/// sum g p, sum g s, sum s, sum g h and sum h, with s = p^(2 - alpha) and h = p log p, in double.
struct AlphaSums {
  double gp = 0, gs = 0, s = 0, gh = 0, h = 0;
};

/// The sums of the alpha gradient's form near alpha = 1 (alpha_gradient.cc), delta = alpha - 1,
/// over one row's support: with l = log p and r = l^2 phi(delta l), phi(y) = (e^-y - 1 + y) / y^2,
/// sum p l, sum p r, sum g p, sum g p r and sum g p l, in double.
struct NearOneSums {
  double l = 0, r = 0, gp = 0, gr = 0, gl = 0;
};

/// The shift q of the centring dx = s (g - q): sum s g / sum s, or 0 where no entry has weight.
template <class T>
T centering_shift(const WeightedSums& sums) {
  return static_cast<T>(sums.s > 0 ? sums.sg / sums.s : 0.0);
}

/// The centring dx_i = s_i ((g_i - reference) - q), q = sum_j s_j (g_j - reference) / sum_j s_j:
/// the same dx for any reference. It is 0 (q = centering_shift) but in rows that one weight
/// dominates (dominated_row), where it is the row's centering_shift itself, or g_m (m the entry
/// of the largest weight) where sum s > 1/eps (dominant_centring).
template <class T>
struct Centring {
  T q = 0;
  T reference = 0;
};

/// Whether one weight dominates a row: the largest weight s_m at least 7/8 of sum s, and above 1.
///
/// Why: dx_m = s_m (g_m - q) with q = g_m + sum_{j != m} s_j (g_j - g_m) / sum s, so g_m - q is
/// that small sum, and dx_m = s_m (sum s - s_m) / sum s times a mean of the g_j - g_m, of the size
/// of sum s - s_m. Computed as s_m (g_m - q), the rounding of q and of the sums, about eps |g|,
/// comes back times s_m: an error of eps |g| s_m / (sum s - s_m) relative to dx. With weights of
/// at most 1 (alpha <= 2) that is the usual eps |g| in absolute terms; with alpha > 2 the weight
/// s = p^(2 - alpha) of an entry at the edge of the support grows without bound as p -> 0 (2% of
/// dx in float at alpha 3 with p_m = 1e-6). Taken from reference = g_m (Centring), the sums hold
/// no s_m g_m and dx_m = -s_m q: the error is eps relative to dx. Rows with
/// s_m / (sum s - s_m) < 7 keep the usual form (an error at most 7 times the usual one); a
/// support of one entry (s_m = 1 = sum s) gets dx = 0 either way. The rule takes about 1%
/// (alpha 2.5), 12% (3), 28-35% (4) and 30-42% (5) of the entmax outputs of N(0,1) rows of
/// 16-512 (a numpy model, 2026-12-07).
inline constexpr double kDominantShare = 0.875;
inline bool dominated_row(double largest, double sum) {
  return largest > 1 && largest >= kDominantShare * sum;
}

/// The longest rows Kernels<T>::centered_rows takes: rows of up to this length fit in L1 with
/// their gradient, and their sums are one block of the weighted-sums kernel.
inline constexpr std::size_t kMaxCenteredRow = 1024;

/// The sums a Newton step of the threshold solvers needs, over candidates y (double):
/// with u_i = base + a y_i (base = 1 - a lambda, or the offset c), over u_i > 0:
///   s = sum u^k,  slope = sum u^(k-1),  count = #{u > 0},  lowest = min u.
/// `integer_k` (1..4, or 0) selects exact products, k = 0.5 a square root; any other k goes
/// through exp((k-1) log(u)). With `near_one` (alpha near 1, k large), base is lambda and
/// u = 1 + t, t = a (y - lambda), u^(k-1) = exp((k-1) log1p(t)) over t > -1: the rounding of
/// 1 - a lambda is not amplified by k.
struct PowerSums {
  double s = 0;
  double slope = 0;
  std::size_t count = 0;  ///< entries with u > 0
  double lowest = 0;      ///< the smallest such u (+inf when there is none)
};
struct PowerSumParams {
  double a, base, k;
  int integer_k = 0;
  bool near_one = false;
};
PowerSums power_sums(const double* y, std::size_t n, const PowerSumParams& params);

/// Removes the entries y <= bound from y[0, n) in place, keeping the order of the others;
/// returns how many are left (SIMD compression, no data-dependent branch).
std::size_t drop_at_or_below(double* y, std::size_t n, double bound);

/// Michelot's iteration for k = 1 (sparsemax) over the candidates y[0, n) (max 0, n >= 1),
/// without moving them: with S = {y > bound} (bound = -inf at first),
///   offset_S = (1 - a sum_S y) / |S|,   bound = -offset_S / a,
/// repeated until S stops shrinking; returns that offset. Each pass is one SIMD sweep with no
/// data-dependent branch, which beats compacting the candidates when they are few.
double michelot_offset(const double* y, std::size_t n, double a);

/// The same offset without iterating, for few candidates: entry i is in the support iff
/// 1 + a sum_j min(0, y_i - y_j) > 0 (the sorted criterion without sorting), n^2 / lanes
/// vector subtractions and one reduction, then the closed form on the support.
double sparsemax_offset_pairwise(const double* y, std::size_t n, double a);

/// The offset of k = 2 (entmax-1.5, 2-normmax), sum_S [a y + offset]_+^2 = 1, the same way:
/// entry i is in the support iff sum_j min(0, y_i - y_j)^2 < 1 / a^2, then the closed form on
/// the support, for at most kMaxPairwise candidates (max 0, a > 0; more abort).
double quadratic_offset_pairwise(const double* y, std::size_t n, double a);

/// The most candidates the pairwise kernels take, and how many the solvers give them, for
/// k = 1 and k = 2 (beyond, Michelot's passes and Newton's steps measured faster).
inline constexpr std::size_t kMaxPairwise = 64;
inline constexpr std::size_t kPairwiseLinear = 16;
inline constexpr std::size_t kPairwiseQuadratic = 32;

/// The most candidates of a row that Kernels<T>::short_rows solves itself (threshold.cc's
/// Michelot passes for k = 1 take the same many).
inline constexpr std::size_t kMaxFusedCandidates = 256;
/// The longest rows Kernels::power_rows takes.
inline constexpr std::size_t kMaxPowerRow = 512;
/// The smallest a = alpha - 1 (the largest k = 1/a, 128) Kernels::power_rows takes: its start
/// comes from Newton's steps in float, whose sums carry k float roundings (2^-17 at k = 128),
/// within the margin of 2^-16 below which its double steps begin.
inline constexpr double kMinPowerRowsA = 0x1p-7;
/// The longest rows Kernels::softmax_rows takes (one block of its float sums).
inline constexpr std::size_t kMaxSoftmaxRow = 1024;

/// The longest rows Kernels<T>::short_rows solves a vector of rows at a time, one row per lane,
/// for k = 1 and k = 2 (beyond, in groups of collected candidates measured faster: the sorting
/// network's cost per row grows as n log^2 n, the groups' as the candidates'; rows of 48 and 64
/// as tiny rows took 1.4-1.6x as long for sparsemax and 1.1-1.3x for entmax-1.5, AVX-512, an AMD
/// EPYC Zen 5, 2026-12-05).
inline constexpr std::size_t kMaxTinyRow = 32;

template <class T>
struct Kernels {
  /// Runs (or resumes) a candidate scan; see CandidateScan.
  static void scan(CandidateScan<T>& scan);
  /// Copies the entries x > threshold of x[0, n) to out, in order; returns their number.
  /// `out` must have room for n + kMaxLanes entries (whole vectors are stored). Blocks of four
  /// vectors with no such entry cost four comparisons and a branch (CollectSkipping).
  static std::size_t collect(const T* x, std::size_t n, T threshold, T* out);
  /// Maximum of x[0, n) (-inf for n = 0); NaN if any entry is NaN.
  static T max(const T* x, std::size_t n);
  /// y[i] = double(x[i]) - double(shift): the candidates of a row in the solvers' form.
  static void shifted_to_double(const T* x, std::size_t n, T shift, double* y);
  /// Sparsemax (k = 1, a = 1) or entmax-1.5 (k = 2, a = 1/2) of `rows` rows of length
  /// n <= 4096 (row-major, in L1) in one call: per row the maximum, the entries above max - 1/a
  /// collected into `buffer`, the threshold on them (a group's sorted prefix scan up to
  /// kPairwiseQuadratic candidates, for rows alone too; up to kMaxFusedCandidates the general solvers' steps,
  /// Michelot's passes for k = 1 and Newton with the closed form for k = 2, the same arithmetic
  /// as the threshold solvers) and the write. Rows of n <= kMaxTinyRow go a vector of rows at a time, one row per lane, each sorted by
  /// a network and its support found in sorted order; rows of up to 512 entries go in groups of
  /// a vector's lanes, whose rows with at most 16 (k = 1) or 32 (k = 2)
  /// candidates are solved together the same way. tau, if not null, gets each row's threshold
  /// a (max + lambda) - 1. Stops at the first row it leaves to the caller (a maximum that is not
  /// finite, or more candidates) and returns its index (rows when every row is done); the rows
  /// before it are done. `buffer` has room for n + kMaxLanes.
  static std::size_t short_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n, int k,
                                T* buffer);
  /// Entmax with k = 1/a not 1 or 2 and a >= kMinPowerRowsA (alpha >= 1 + 2^-7, not 1.5 or 2) on `rows` rows
  /// of length n <= kMaxPowerRow in one call, Lanes(double) rows at a time (Lanes(float) for
  /// a k that is not an integer), one row per lane: per row the maximum, the candidates
  /// (entries above max - 1/a, or for k > 1 on rows of 128 and more, where most lane maxima
  /// are candidates, above max + lambda_0 - 1/a with lambda_0 <= lambda from one Newton step on
  /// the lane maxima), the threshold by the Newton steps of newton_threshold (k > 1)
  /// or offset_threshold (k < 1) (the same steps, bracket and stop per lane, the sums in
  /// another order, from lambda_0, for a k that is not an integer from a start found by the
  /// same steps in float: within rounding of the row-at-a-time solver's) and the write of
  /// entmax_row; tau, if not null, gets a (max + lambda) - 1. Stops at the first
  /// row whose maximum is not finite (NaN, +inf or all -inf) and returns its index (rows when
  /// every row is done).
  static std::size_t power_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n, double a,
                                double k);
  /// Softmax of `rows` rows of length n <= kMaxSoftmaxRow (row-major) in one call: per row
  /// p = exp(x - max) / sum, the sum in float vectors then double (as sum() over one block),
  /// and tau, if not null, max + log(sum). Stops at the first row whose maximum is not finite
  /// (NaN, +inf, or every entry -inf) and returns its index (rows when every row is done).
  static std::size_t softmax_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n);
  /// p[i] = f(x[i]) as described by WriteParams; p may equal x.
  static void write(const T* x, T* p, std::size_t n, const WriteParams<T>& params);
  /// sum_i p[i] in double (after a write pass of kind exponential: the softmax normaliser).
  static double sum(const T* p, std::size_t n);
  /// p[i] *= factor.
  static void scale(T* p, std::size_t n, T factor);
  /// sum s_i g_i and sum s_i; s_out, if not null, receives s (it may be p, not g).
  static WeightedSums weighted_sums(const T* p, const T* g, std::size_t n, const Weights<T>& w,
                                    T* s_out = nullptr);
  /// dx[i] = s[i] ((g[i] - c.reference) - c.q); dx may equal s or g.
  static void center_weights(const T* s, const T* g, T* dx, std::size_t n, const Centring<T>& c);
  /// dx[i] = s_i ((g[i] - c.reference) - c.q); dx may equal g.
  static void weighted_center(const T* p, const T* g, T* dx, std::size_t n, const Weights<T>& w,
                              const Centring<T>& c);
  /// The Centring of a row that one weight dominates (dominated_row(sums.largest, sums.s)):
  /// reference r = centering_shift(sums), and q = sum s (g - r) / sums.s. Its dominant term
  /// s_m (g_m - r) is then s_m times the other weights' share of the sum, so the sums' rounding
  /// reaches dx_m scaled by that share, while the share is above about eps (always where
  /// sums.s <= 1/eps in T: the weights of a dominated row are at least 1); above, r = g_m, m an
  /// entry whose weight is sums.largest (the largest g where weights tie). The weights are those
  /// of p (w), or `source` holds them (weights = true, as weighted_sums' s_out).
  static Centring<T> dominant_centring(const T* source, bool weights, const T* g, std::size_t n,
                                       const Weights<T>& w, const WeightedSums& sums);
  /// The whole backward of `rows` rows of length n <= kMaxCenteredRow (row-major, one after
  /// another): dx = s (g - q), q = sum s g / sum s (0 where sum s = 0), in one call; rows that
  /// one weight dominates (dominated_row) centred as dominant_centring centres them. Rows of
  /// up to 256 entries go N rows at a time, their sums reduced across lanes together (in another
  /// order than weighted_sums': results within rounding of it); longer ones take the arithmetic
  /// of weighted_sums and weighted_center, to the bit. Either way a row's dx does not depend on
  /// the rows around it. dx may equal p or g.
  static void centered_rows(const T* p, const T* g, T* dx, std::size_t rows, std::size_t n,
                            const Weights<T>& w);
  /// AlphaSums of one row of n entries for s of the weights w (EntmaxWeights<double>(alpha)):
  /// each term in double (s as the backward's weights, log by Highway's Log: within a few ulps
  /// of std::pow and std::log), over the entries with p > 0 only (packed first), summed in
  /// compensated lanes and folded across them compensated.
  static AlphaSums alpha_sums(const T* p, const T* g, std::size_t n, const Weights<double>& w);
  /// NearOneSums of one row of n entries for delta = alpha - 1 (any; phi by its series for
  /// |delta log p| <= 1/2, else by Expm1), each term in double, summed as alpha_sums.
  static NearOneSums near_one_sums(const T* p, const T* g, std::size_t n, double delta);
};

/// One target's kernels for one element type, as function pointers (simd_kernels.cc fills a
/// KernelTable per target from simd_kernels-inl.h; Kernels<T> calls through the chosen one).
template <class T>
struct TypedKernels {
  void (*scan)(CandidateScan<T>&);
  std::size_t (*collect)(const T*, std::size_t, T, T*);
  T (*max)(const T*, std::size_t);
  void (*shifted_to_double)(const T*, std::size_t, T, double*);
  std::size_t (*short_rows)(const T*, T*, T*, std::size_t, std::size_t, int, T*);
  std::size_t (*power_rows)(const T*, T*, T*, std::size_t, std::size_t, double, double);
  std::size_t (*softmax_rows)(const T*, T*, T*, std::size_t, std::size_t);
  void (*write)(const T*, T*, std::size_t, const WriteParams<T>&);
  double (*sum)(const T*, std::size_t);
  void (*scale)(T*, std::size_t, T);
  WeightedSums (*weighted_sums)(const T*, const T*, std::size_t, const Weights<T>&, T*);
  void (*center_weights)(const T*, const T*, T*, std::size_t, const Centring<T>&);
  void (*weighted_center)(const T*, const T*, T*, std::size_t, const Weights<T>&,
                          const Centring<T>&);
  Centring<T> (*dominant_centring)(const T*, bool, const T*, std::size_t, const Weights<T>&,
                                   const WeightedSums&);
  void (*centered_rows)(const T*, const T*, T*, std::size_t, std::size_t, const Weights<T>&);
  AlphaSums (*alpha_sums)(const T*, const T*, std::size_t, const Weights<double>&);
  NearOneSums (*near_one_sums)(const T*, const T*, std::size_t, double);
};

struct KernelTable {
  TypedKernels<float> float_kernels;
  TypedKernels<double> double_kernels;
  PowerSums (*power_sums)(const double*, std::size_t, const PowerSumParams&);
  std::size_t (*drop_at_or_below)(double*, std::size_t, double);
  double (*michelot_offset)(const double*, std::size_t, double);
  double (*sparsemax_offset_pairwise)(const double*, std::size_t, double);
  double (*quadratic_offset_pairwise)(const double*, std::size_t, double);
  std::int64_t target;  ///< the Highway target these kernels were compiled for (HWY_AVX2, ...)
};

namespace detail {

/// For tests that run the kernels on every target (tests/discrete/simd_targets_test.cc): the
/// kernels are resolved through Highway's dispatch at the first call and kept in an atomic
/// pointer, so restricting Highway's targets afterwards changes nothing by itself. A test calls
///   hwy::SetSupportedTargetsForTest(target); hwy::GetChosenTarget().Update(hwy::SupportedTargets());
///   sparcon::simd::detail::reselect_kernels();
/// and every later call (from any thread) runs `target`'s kernels; the same with a mask of 0
/// returns to the CPU's best. Returns the target now in use. Not for concurrent use with calls
/// into the library. The calls themselves pay nothing for this: one relaxed load of the pointer,
/// as before one load behind the function-local static's guard.
std::int64_t reselect_kernels();
/// The target whose kernels are in use (resolving them if no call has yet).
std::int64_t kernel_target();

/// For tests only (0 in the library): with shift > 0, Kernels::power_rows starts the double
/// steps of its compacted rows (a general power on rows longer than 64) at the float start
/// times 1 + shift instead of 2^-16 below it, above the root of every row whose threshold is
/// not 0. Those rows then take the path for a start that is no lower bound: solved again from
/// 0 on all their candidates. Rounding alone does not reach that path on any row the tests
/// or a search of random rows found (the float start is within about 2^-17 of the root at
/// k = 128, kMinPowerRowsA). Not for concurrent use with calls into the library.
inline double power_rows_floor_shift = 0;

}  // namespace detail

}  // namespace sparcon::simd
