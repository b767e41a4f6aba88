// Argument checks shared by the continuous core.
#pragma once

#include "sparcon/basis.h"

namespace sparcon::detail {

/// Throws unless the basis is non-empty, with as many widths as centres, finite centres and
/// finite positive widths.
template <class T>
void check_basis(const char* function, const GaussianBasis1D<T>& basis);

}  // namespace sparcon::detail
