// The attention variants of the sequence-to-sequence and VQA experiments, by the names their
// command lines and results tables use (the text-classification experiment's names carry a
// basis size and have their own parser):
//   softmax, sparsemax, entmax15       discrete attention (alpha 1, 2, 1.5)
//   cont-softmax, cont-sparsemax       continuous attention alone (alpha 1, 2)
//   disc-softmax, disc-sparsemax       discrete and continuous contexts added ("disc+cont")
//   mixK                               a mixture of K continuous densities (K >= 2)
#pragma once

#include <string>
#include <vector>

namespace kit {

struct AttentionVariant {
  std::string name;
  std::string kind = "discrete";  ///< "discrete", "cont", "disc+cont" or "mixture"
  double alpha = 1.0;             ///< the discrete map's alpha, or the continuous family's
  int components = 1;             ///< "mixture": K
  [[nodiscard]] bool continuous() const { return kind != "discrete"; }
};

/// The variant called `name`, which must be one of `known` (an experiment's list, from the
/// names above); throws std::invalid_argument naming it and the known names.
AttentionVariant parse_attention_variant(const std::string& name, const std::vector<std::string>& known);

}  // namespace kit
