// A 64-bit FNV-1a hash, for the data fingerprint of a run directory (a vocabulary, a list of
// file names): cheap, stable across platforms and standard libraries, not cryptographic.
#pragma once

#include <cstdint>
#include <string_view>

namespace kit {

class Fnv1a {
 public:
  /// FNV-1a's 64-bit offset basis, 0xcbf29ce484222325.
  static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ull;

  /// The hash starts from `basis` (the standard one by default; text_classification passes the
  /// value its run directories were first written with).
  explicit Fnv1a(std::uint64_t basis = kOffsetBasis) : hash_(basis) {}

  /// Continues the hash with the bytes of text: h = (h xor byte) * 1099511628211 per byte.
  /// add(a); add(b) hashes the same as add(a + b).
  Fnv1a& add(std::string_view text) {
    for (const char c : text) hash_ = (hash_ ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return *this;
  }
  [[nodiscard]] std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_;
};

}  // namespace kit
