// Entmax with alpha > 2 solved again relative to the entry nearest the edge of its support
// (support_edge.h).
#include "discrete/support_edge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compensated_sum.h"
#include "discrete/threshold.h"  // round_down

namespace sparcon::detail {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// hi + lo, hi the rounded value.
struct Pair {
  double hi, lo;
};

// a + b exactly, as its rounding and the error of it.
Pair two_sum(double a, double b) {
  const double s = a + b;
  return {s, two_sum_error(a, b, s)};
}

// a (x - pivot): the difference exact by TwoSum, the product of its high part exact by an FMA;
// the one rounding left (a times the difference's low part) is 2^-106 of the result.
Pair scaled_difference(double a, double x, double pivot) {
  const Pair s = two_sum(x, -pivot);
  const double product = a * s.hi;
  return two_sum(product, std::fma(a, s.hi, -product) + a * s.lo);
}

// An entry of the row other than the pivot and its ties: base u = d + v, d = a (x - x_pivot),
// v the pivot's base.
struct Entry {
  std::size_t index;
  Pair d;
};

// The row's equation in t, the pivot's p where its base v is positive (v = t^a) and v itself
// where it is not (t <= 0):
//   F(t) = m [t]_+ + sum_i [d_i + v(t)]_+^k - 1,
// with m the entries equal to the pivot (itself included) and the sum over the others.
// Continuous and increasing in t; its slope is m + a t^(a-1) sum_i k u_i^(k-1) for t > 0, the
// sum alone for t <= 0.
class EdgeEquation {
 public:
  EdgeEquation(const std::vector<Entry>& others, double ties, double a, double k)
      : others_(others), ties_(ties), a_(a), k_(k) {}

  double base(double t) const { return t > 0 ? std::pow(t, a_) : t; }

  // The base u = d + v of an entry, as hi + lo.
  static Pair base_of(const Pair& d, double v) {
    const Pair sum = two_sum(d.hi, v);
    return two_sum(sum.hi, sum.lo + d.lo);
  }

  // [u]_+^k, the low part of u taken to first order: (hi + lo)^k = hi^k (1 + k lo / hi).
  double power(const Pair& u) const {
    if (!(u.hi > 0)) return 0;
    const double r = std::pow(u.hi, k_);
    return r + k_ * r * (u.lo / u.hi);
  }

  struct Value {
    double t, f, slope;
  };
  Value operator()(double t) const {
    const double v = base(t);
    CompensatedSum sum;
    if (t > 0) sum += ties_ * t;
    double slope = 0;  // d/dv of the others' terms
    for (const Entry& e : others_) {
      const Pair u = base_of(e.d, v);
      const double term = power(u);
      sum += term;
      if (term > 0) slope += k_ * term / u.hi;
    }
    sum += -1.0;
    return {t, sum.value(), t > 0 ? ties_ + slope * a_ * v / t : slope};
  }

 private:
  const std::vector<Entry>& others_;
  double ties_, a_, k_;
};

// Counts an evaluation toward the bracket [lo, hi] (F(lo) < 0 < F(hi)) and the best point
// (smallest |F|).
struct Bracket {
  EdgeEquation::Value lo, hi, best;
  void add(const EdgeEquation::Value& v) {
    (v.f < 0 ? lo : hi) = v;
    if (std::abs(v.f) < std::abs(best.f)) best = v;
  }
};

}  // namespace

double support_edge_window(double k) { return std::pow(k * 0x1p-10, 1 / (1 - k)); }

// The bases here are a multiply and an add, not std::fma: a rounding more in u is nothing next
// to the window, and this file is built for the baseline x86-64 (std::fma a call into glibc).
// The FMA of scaled_difference, which must be exact, runs on the rows solved again only.
bool near_support_edge(const double* y, std::size_t count, std::size_t stride, double a, double c,
                       double window) {
  const double edge = window * c;
  bool near = false;
  for (std::size_t j = 0; j < count; ++j) near |= std::abs(a * y[j * stride] + c) < edge;
  return near;
}

template <class T>
double refine_support_edge(const T* x, T* p, std::size_t n, T max, double a, double k, double c) {
  // The entries that may be inside (every one of the support: c is within a few ulps), found by
  // one comparison in T each (a bound rounded down past the rounding of its double form), and
  // the pivot: the one whose base is nearest 0. The buffers are kept from call to call.
  const double top = static_cast<double>(max), below = top - (c + 0x1p-20 * c) / a;
  const T bound = round_down<T>(below - 4 * kEps * (std::abs(top) + std::abs(below)));
  thread_local std::vector<std::size_t> near;
  thread_local std::vector<Entry> others;
  near.clear();
  others.clear();
  std::size_t pivot = 0;
  double pivot_base = std::numeric_limits<double>::infinity();
  constexpr std::size_t kBlock = 32;  // blocks tested at once (vectorised by the compiler)
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    bool any = false;
    for (std::size_t i = begin; i < end; ++i) any |= x[i] > bound;
    if (!any) continue;
    for (std::size_t i = begin; i < end; ++i) {
      if (!(x[i] > bound)) continue;
      near.push_back(i);
      const double u = a * (static_cast<double>(x[i]) - top) + c;
      if (std::abs(u) < std::abs(pivot_base)) {
        pivot = i;
        pivot_base = u;
      }
    }
  }
  const double x_pivot = static_cast<double>(x[pivot]);
  double ties = 0;
  for (std::size_t i : near) {
    const Pair d = scaled_difference(a, static_cast<double>(x[i]), x_pivot);
    if (d.hi == 0 && d.lo == 0)
      ++ties;
    else
      others.push_back({i, d});
  }
  const EdgeEquation equation(others, ties, a, k);
  auto t_of = [&](double v) { return v > 0 ? std::pow(v, k) : v; };

  // Newton's steps in t from the pivot's base at c. Each evaluation narrows the bracket
  // [lo, hi] (F(lo) < 0 < F(hi), unbounded on a side until a point of that sign is seen). A step
  // that leaves it, or makes no move (an infinite slope), is replaced: while a side is unbounded,
  // by the base of the bracket's other end moved toward it by 32 ulps of c, 16 times more each
  // time, giving up past 2^21 ulps (not seen: c is within a few); else by bisection, at t = 0
  // first when the bracket spans it (where the pivot enters the support, the kink of F). It
  // stops at F = 0, at a step at the rounding level of t, or when no double is left inside.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EdgeEquation::Value at = equation(t_of(pivot_base));
  Bracket bracket{{-kInf, -kInf, 0}, {kInf, kInf, 0}, at};
  bracket.add(at);
  double step = 32 * kEps * c;
  bool tried_zero = false;
  for (int it = 0; it < 200 && bracket.best.f != 0; ++it) {
    double next = at.t - at.f / at.slope;
    if (!(next > bracket.lo.t && next < bracket.hi.t) || next == at.t) {
      const bool no_lo = bracket.lo.t == -kInf, no_hi = bracket.hi.t == kInf;
      if (no_lo || no_hi) {
        if (step > 0x1p21 * kEps * c) return c;
        next = no_lo ? t_of(equation.base(bracket.hi.t) - step)
                     : t_of(equation.base(bracket.lo.t) + step);
        step *= 16;
      } else {
        next = bracket.lo.t < 0 && bracket.hi.t > 0 && !tried_zero
                   ? 0
                   : bracket.lo.t + 0.5 * (bracket.hi.t - bracket.lo.t);
        tried_zero = tried_zero || next == 0;
      }
    }
    if (!(next > bracket.lo.t && next < bracket.hi.t)) break;  // adjacent doubles
    const bool rounding = std::abs(next - at.t) <= 2 * kEps * std::abs(next);
    at = equation(next);
    bracket.add(at);
    if (rounding) break;
  }

  const double t = bracket.best.t, v = equation.base(t);
  const T pivot_p = static_cast<T>(t > 0 ? t : 0);
  for (std::size_t i : near)
    if (static_cast<double>(x[i]) == x_pivot) p[i] = pivot_p;
  for (const Entry& e : others)
    p[e.index] = static_cast<T>(equation.power(EdgeEquation::base_of(e.d, v)));
  const Pair offset = scaled_difference(a, top, x_pivot);  // c = a (max - x_pivot) + v
  return offset.hi + (offset.lo + v);
}

template double refine_support_edge(const float*, float*, std::size_t, float, double, double,
                                    double);
template double refine_support_edge(const double*, double*, std::size_t, double, double, double,
                                    double);

}  // namespace sparcon::detail
