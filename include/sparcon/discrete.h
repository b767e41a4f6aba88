// sparcon/discrete.h: the discrete alpha-entmax family over batches of rows.
//
// For a row x of length n and alpha > 0 (docs/math.md sections 1-2):
//
//   entmax_alpha(x) = argmax_{p in simplex} <p, x> + H^T_alpha(p)
//   p_i = [(alpha - 1) x_i - tau]_+^(1/(alpha-1)),   tau such that sum_i p_i = 1
//
// alpha = 1 is softmax (p_i = exp(x_i - tau), tau = logsumexp(x)), alpha = 2 sparsemax,
// alpha = 1.5 entmax-1.5. For alpha < 1 the map is dense (every p_i > 0), as in the `entmax`
// package. Two relatives complete the family:
//   normmax_alpha(x) = argmax_{p in simplex} <p, x> - ||p||_alpha      (alpha > 1)
//                    p_i proportional to [x_i - tau]_+^(1/(alpha-1)), sum_i [x_i - tau]_+^(alpha/(alpha-1)) = 1
//   budget_b(x)      = projection onto {0 <= p <= 1, sum p = b}:   p_i = clip(x_i - tau, 0, 1)
//
// Thresholds are exact: sparsemax and entmax-1.5 up to rounding (closed form on the identified
// support), general alpha to machine precision (safeguarded Newton, finished on the support).
// Nothing sorts a row. Rows are processed with SIMD chosen at run time (Google Highway).
//
// Conventions shared by every function here:
// - x, p, g, dx hold rows.size() = rows.count * rows.length entries, row-major (rows.h).
// - Outputs may alias an input exactly (in place): p == x in forward, dx == g in backward.
//   Any other overlap is rejected.
// - Masking: an entry -inf gets p_i = 0 and gradient 0. A row whose entries are all -inf gets
//   p = 0 (it is not a distribution), tau = +inf, and a zero gradient.
// - A row holding NaN or +inf gets p = NaN on the whole row (tau = NaN); never a crash or hang.
// - Bad arguments (sizes, alpha <= 0, a budget outside (0, n]) throw std::invalid_argument
//   whose message names the argument and its value.
#pragma once

#include <concepts>
#include <span>
#include <type_traits>

#include "sparcon/rows.h"

namespace sparcon {

/// Which map of the family.
enum class Map {
  softmax,    ///< alpha = 1
  sparsemax,  ///< alpha = 2
  entmax15,   ///< alpha = 1.5
  entmax,     ///< any alpha > 0 (parameter = alpha); 1, 1.5 and 2 take the exact paths above
  normmax,    ///< alpha-normmax, alpha > 1 (parameter = alpha)
  budget,     ///< capped simplex, 0 < b <= n (parameter = b)
};

/// A member of the family with its parameter (alpha or budget), shared or per row.
template <std::floating_point T>
struct Family {
  Map map = Map::softmax;
  PerRow<T> parameter = T(1);

  static Family softmax() { return {Map::softmax, T(1)}; }
  static Family sparsemax() { return {Map::sparsemax, T(2)}; }
  static Family entmax15() { return {Map::entmax15, T(1.5)}; }
  static Family entmax(PerRow<T> alpha) { return {Map::entmax, alpha}; }
  static Family normmax(PerRow<T> alpha) { return {Map::normmax, alpha}; }
  static Family budget(PerRow<T> budget) { return {Map::budget, budget}; }
};

/// Forward map, row by row: p = map(x). Shapes: x, p (rows.count x rows.length).
/// `tau`, if not empty, receives the threshold of each row (rows.count entries), in the
/// unshifted form of the formulas above (softmax: logsumexp(x)). For budget, tau is not unique
/// when every p_i is 0 or 1; any valid one is returned. Reported unshifted, tau carries the
/// rounding of (alpha - 1) max x, so rows far from 0 get a tau accurate only to that.
template <std::floating_point T>
void forward(const Family<T>& family, std::span<const T> x, std::span<T> p, Rows rows,
             Threads threads = {}, std::span<T> tau = {});

/// Backward (vector-Jacobian product) from the forward output p and the upstream gradient g:
/// dx = J(x)^T g. For the entmax family, with s_i = p_i^(2 - alpha) on the support:
///   dx = s * g - s * (sum_i s_i g_i) / (sum_i s_i)
/// (softmax: s = p; sparsemax: s = 1 on the support). normmax: the implicit-function Jacobian
///   dx = (||p||_a^(a-1)/(a-1)) [s*g - (s.g) p - (p.g) (s - (sum s) p)],  s = p^(2-a)
/// budget: dx = g - mean_A(g) on A = {0 < p < 1}, 0 elsewhere. Shapes: p, g, dx alike.
/// For every map but softmax (and entmax at alpha = 1), entries with s_i = 0 (p_i = 0; for
/// budget also p_i = 1) get dx_i = +0 and take no part in the sums, whatever g_i holds there,
/// also inf or NaN (as the entmax package's sparsemax). Softmax multiplies: an inf in g at a
/// masked entry (p_i = 0) gives NaN, as torch.softmax's backward does.
template <std::floating_point T>
void backward(const Family<T>& family, std::span<const T> p, std::span<const T> g,
              std::span<T> dx, Rows rows, Threads threads = {});

/// Gradient of <g, entmax_alpha(x)> with respect to alpha, one value per row (rows.count):
///   d alpha = sum_i g_i [ (p_i - s^_i)/(alpha-1)^2 - (h_i - s^_i H)/(alpha-1) ]
/// with s_i = p_i^(2-alpha), s^ = s / sum s, h_i = p_i log p_i, H = sum h (sums over the
/// support). At alpha = 1 exactly it returns the limit, with l_i = log p_i:
///   d alpha = (1/2) sum_i g_i p_i (sum_j p_j l_j^2 - l_i^2).
/// The direct form cancels near alpha = 1 (relative error about eps / (alpha - 1)^2), so for
/// |alpha - 1| < 1/4 the same quantity is computed from an exact rearrangement in
/// d = alpha - 1 whose terms stay bounded as d -> 0 (alpha_gradient.cc).
/// Shapes: p, g (rows.count x rows.length), dalpha (rows.count).
template <std::floating_point T>
void entmax_alpha_backward(std::span<const T> p, std::span<const T> g, std::span<T> dalpha,
                           Rows rows, std::type_identity_t<PerRow<T>> alpha,
                           Threads threads = {});

// Named forms, as in the `entmax` package. Each is forward() or backward() of one Family.

template <std::floating_point T>
void softmax(std::span<const T> x, std::span<T> p, Rows rows, Threads threads = {}) {
  forward(Family<T>::softmax(), x, p, rows, threads);
}
template <std::floating_point T>
void sparsemax(std::span<const T> x, std::span<T> p, Rows rows, Threads threads = {}) {
  forward(Family<T>::sparsemax(), x, p, rows, threads);
}
template <std::floating_point T>
void entmax15(std::span<const T> x, std::span<T> p, Rows rows, Threads threads = {}) {
  forward(Family<T>::entmax15(), x, p, rows, threads);
}
template <std::floating_point T>
void entmax(std::span<const T> x, std::span<T> p, Rows rows,
            std::type_identity_t<PerRow<T>> alpha, Threads threads = {}) {
  forward(Family<T>::entmax(alpha), x, p, rows, threads);
}
template <std::floating_point T>
void normmax(std::span<const T> x, std::span<T> p, Rows rows,
             std::type_identity_t<PerRow<T>> alpha, Threads threads = {}) {
  forward(Family<T>::normmax(alpha), x, p, rows, threads);
}
template <std::floating_point T>
void budget(std::span<const T> x, std::span<T> p, Rows rows,
            std::type_identity_t<PerRow<T>> budget, Threads threads = {}) {
  forward(Family<T>::budget(budget), x, p, rows, threads);
}

template <std::floating_point T>
void softmax_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                      Threads threads = {}) {
  backward(Family<T>::softmax(), p, g, dx, rows, threads);
}
template <std::floating_point T>
void sparsemax_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                        Threads threads = {}) {
  backward(Family<T>::sparsemax(), p, g, dx, rows, threads);
}
template <std::floating_point T>
void entmax15_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                       Threads threads = {}) {
  backward(Family<T>::entmax15(), p, g, dx, rows, threads);
}
template <std::floating_point T>
void entmax_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                     std::type_identity_t<PerRow<T>> alpha, Threads threads = {}) {
  backward(Family<T>::entmax(alpha), p, g, dx, rows, threads);
}
template <std::floating_point T>
void normmax_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                      std::type_identity_t<PerRow<T>> alpha, Threads threads = {}) {
  backward(Family<T>::normmax(alpha), p, g, dx, rows, threads);
}
template <std::floating_point T>
void budget_backward(std::span<const T> p, std::span<const T> g, std::span<T> dx, Rows rows,
                     Threads threads = {}) {
  backward(Family<T>::budget(T(1)), p, g, dx, rows, threads);
}

}  // namespace sparcon
