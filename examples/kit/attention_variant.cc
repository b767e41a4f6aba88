// The attention variants of the experiments (attention_variant.h).
#include "kit/attention_variant.h"

#include <algorithm>
#include <stdexcept>

namespace kit {

namespace {

// The variant of a name of the grammar in attention_variant.h, or nothing.
bool parse(const std::string& name, AttentionVariant& v) {
  v.name = name;
  if (name == "softmax") return true;
  if (name == "sparsemax" || name == "entmax15") {
    v.alpha = name == "sparsemax" ? 2.0 : 1.5;
    return true;
  }
  if (name.size() == 4 && name.rfind("mix", 0) == 0 && name[3] >= '2' && name[3] <= '9') {
    v.kind = "mixture";
    v.components = name[3] - '0';
    return true;
  }
  for (const char* kind : {"cont", "disc"})
    for (const char* family : {"softmax", "sparsemax"})
      if (name == std::string(kind) + "-" + family) {
        v.kind = std::string(kind) == "cont" ? "cont" : "disc+cont";
        v.alpha = std::string(family) == "softmax" ? 1.0 : 2.0;
        return true;
      }
  return false;
}

}  // namespace

AttentionVariant parse_attention_variant(const std::string& name, const std::vector<std::string>& known) {
  AttentionVariant v;
  if (std::find(known.begin(), known.end(), name) != known.end() && parse(name, v)) return v;
  std::string list;
  for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown attention variant '" + name + "': expected one of " + list);
}

}  // namespace kit
