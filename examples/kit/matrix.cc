// Matrix checks (kit/matrix.h).
#include "kit/matrix.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kit {

void check_matrix(const Matrix& m, std::string_view function, std::string_view argument) {
  const std::string name = std::string(function) + ": " + std::string(argument);
  if (m.rows == 0 || m.cols == 0)
    throw std::invalid_argument(name + " is empty (" + std::to_string(m.rows) + " x " + std::to_string(m.cols) + ")");
  if (m.values.size() != m.rows * m.cols)
    throw std::invalid_argument(name + " has " + std::to_string(m.values.size()) + " values for " +
                                std::to_string(m.rows) + " x " + std::to_string(m.cols));
  for (std::size_t i = 0; i < m.values.size(); ++i)
    if (!std::isfinite(m.values[i])) {
      std::ostringstream value;
      value << m.values[i];
      throw std::invalid_argument(name + "[" + std::to_string(i / m.cols) + ", " + std::to_string(i % m.cols) +
                                  "] = " + value.str() + " is not finite");
    }
}

}  // namespace kit
