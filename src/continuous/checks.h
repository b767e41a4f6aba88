// Argument checks shared by the continuous core.
#pragma once

#include <Eigen/Core>
#include <cstddef>

#include "sparcon/basis.h"

namespace sparcon::detail {

/// Throws unless the basis is non-empty, with as many widths as centres, finite centres and
/// finite positive widths.
template <class T>
void check_basis(const char* function, const GaussianBasis1D<T>& basis);

/// The same for a 2D basis: centres (N x 2), widths (N x 4) symmetric positive definite.
template <class T>
void check_basis(const char* function, const GaussianBasis2D<T>& basis);

/// The 2 x 2 matrix at m (row-major), checked finite, symmetric (to 8 ulp of T of its
/// diagonal) and positive definite, in double with the off-diagonal entries averaged. The
/// message names it `name`[index] (no index when index < 0).
template <class T>
Eigen::Matrix2d symmetric_positive_definite(const char* function, const char* name, const T* m,
                                            std::ptrdiff_t index = -1);

}  // namespace sparcon::detail
