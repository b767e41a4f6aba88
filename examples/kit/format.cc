// Numbers as text (kit/format.h).
#include "kit/format.h"

#include <cmath>
#include <cstdio>

namespace kit {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace kit
