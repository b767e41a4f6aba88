// The one table from a map's name to the core's family (sparcon/discrete.h) for the LibTorch
// layer: the name of each map (its op, torch.ops.sparcon.<name>), the map of a name or of a
// number alpha, and the Family member with its parameter.
#pragma once

#include <c10/util/Exception.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "sparcon/discrete.h"

namespace sparcon::torch::detail {

struct NamedMap {
  const char* name;  ///< the op's name
  Map map;
  bool has_parameter;  ///< alpha (entmax, normmax) or the budget
};

/// Every map of the family, in the order of sparcon::Map.
inline constexpr NamedMap kMaps[] = {
    {"softmax", Map::softmax, false},   {"sparsemax", Map::sparsemax, false},
    {"entmax15", Map::entmax15, false}, {"entmax", Map::entmax, true},
    {"normmax", Map::normmax, true},    {"budget", Map::budget, true},
};
static_assert(kMaps[static_cast<std::size_t>(Map::budget)].map == Map::budget);

inline const NamedMap& named(Map map) { return kMaps[static_cast<std::size_t>(map)]; }

/// The op's name of a map ("softmax", ..., "budget").
inline const char* map_name(Map map) { return named(map).name; }

/// The map called `name`, if there is one.
inline std::optional<Map> map_named(std::string_view name) {
  for (const NamedMap& m : kMaps)
    if (name == m.name) return m.map;
  return std::nullopt;
}

/// alpha-entmax for a number alpha: the exact paths of softmax, entmax15 and sparsemax for
/// alpha = 1, 1.5 and 2, entmax otherwise.
inline Map map_of_alpha(double alpha) {
  if (alpha == 1) return Map::softmax;
  if (alpha == 1.5) return Map::entmax15;
  if (alpha == 2) return Map::sparsemax;
  return Map::entmax;
}

/// The member of the family: `map` with the number `parameter` (alpha, or the budget; unused
/// by softmax, sparsemax and entmax15), or with one value per row when per_row is not empty.
template <class T>
Family<T> family_of(Map map, double parameter, std::span<const T> per_row = {}) {
  const PerRow<T> value =
      per_row.empty() ? PerRow<T>(static_cast<T>(parameter)) : PerRow<T>(per_row);
  switch (map) {
    case Map::softmax: return Family<T>::softmax();
    case Map::sparsemax: return Family<T>::sparsemax();
    case Map::entmax15: return Family<T>::entmax15();
    case Map::entmax: return Family<T>::entmax(value);
    case Map::normmax: return Family<T>::normmax(value);
    case Map::budget: return Family<T>::budget(value);
  }
  TORCH_CHECK_VALUE(false, "sparcon: unknown map");
}

}  // namespace sparcon::torch::detail
