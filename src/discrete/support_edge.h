// Entmax with alpha > 2 at the edge of its support, solved again relative to the entry nearest it.
//
// With a = alpha - 1 > 1 and k = 1/a < 1, p_i = u_i^k with u_i = a (x_i - max x) + c. The
// solvers find the offset c in double, within an ulp or two, and every u carries that rounding
// (about 2^-53 c). Where u is large that is an ulp of p; near the edge of the support, where the
// slope k u^(k-1) of the power is unbounded, it is not: an entry exactly on the edge got
// p = (2^-52)^k, 1.5e-8 for alpha = 3 and 1e-4 for alpha = 5 where the exact p is 0, sum(p)
// was off by as much, and the backward's weights p^(2 - alpha) of that entry swamped the rest.
//
// A row with a candidate near the edge (support_edge_window) is solved again (docs/math.md,
// section 2, "the support edge"): the unknown is t, the p of the entry nearest the edge (the
// pivot) where that entry is inside, and its base u where it is not. Every other entry's base is
// then d_i + u_pivot with d_i = a (x_i - x_pivot), exact as a double-double; no rounding of c
// enters any u, and the pivot's p is the unknown itself, to its own relative precision.
#pragma once

#include <cstddef>

namespace sparcon::detail {

/// The window of the edge, as a fraction of c: an entry whose base u is within it of 0 may have
/// p off by more than 2^-40 from the rounding of c, which moves u by at most 2^-50 c and p by
/// about k u^(k-1) 2^-50 c; that is 2^-40 at u = (k c 2^-10)^(1/(1-k)), at most
/// (k 2^-10)^(1/(1-k)) c for c <= 1 (the value returned). A fraction of the rows takes the new
/// solve: of N(0, 1) rows of 64 and 512, 0.1% for alpha = 3, 2-3% for 4, 8% for 5, 21-26% for 8.
double support_edge_window(double k);

/// Whether a row of entmax with alpha > 2 takes refine_support_edge: some candidate y_j
/// (y[j * stride], j < count, y = x - max; -inf for none) has |a y_j + c| < window c.
bool near_support_edge(const double* y, std::size_t count, std::size_t stride, double a, double c,
                       double window);

/// Solves the row x[0, n) of entmax with a = alpha - 1 > 1, k = 1/a again relative to the entry
/// nearest the edge of the support, given its finite maximum `max` and the offset c the solvers
/// found, and rewrites p on the entries with a (x - max) + c > -2^-20 c (every other entry has
/// p = 0 already). Returns the offset of the new solution (rounded to double), from which
/// tau = a max - c. Leaves p as it was and returns c when the new solve finds no sign change
/// near c (not seen; a guard).
template <class T>
double refine_support_edge(const T* x, T* p, std::size_t n, T max, double a, double k, double c);

}  // namespace sparcon::detail
