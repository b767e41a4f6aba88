// Numbers as text for tables and reports.
#pragma once

#include <string>

namespace kit {

/// value with `decimals` digits after the point ("%.*f"), or "n/a" when it is not finite.
std::string fixed(double value, int decimals);

}  // namespace kit
