// The IDX format of (Fashion-)MNIST (http://yann.lecun.com/exdb/mnist/): a big-endian header
// "0x00 0x00 <type> <dims>", then dims 32-bit big-endian sizes, then the data in row-major order.
// Only type 0x08 (unsigned bytes) is read, the type of all four Fashion-MNIST files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vqa {

struct IdxArray {
  std::vector<std::size_t> sizes;  ///< e.g. {60000, 28, 28} (images) or {60000} (labels)
  std::vector<std::uint8_t> data;  ///< prod(sizes) bytes, row-major
};

/// Parses IDX bytes; `source` (a file name) starts every error message. Checks: at least 4
/// header bytes; the magic's first two bytes zero; type 0x08; 1 <= dims <= 8 and the sizes'
/// 4 * dims bytes present; and exactly prod(sizes) data bytes (fewer: "truncated: <n> data bytes,
/// the header announces <m>"; more: "<k> bytes after the data"). Throws std::runtime_error.
IdxArray parse_idx(std::string_view bytes, const std::string& source);

/// The magic number of an IDX file of unsigned bytes with `dims` dimensions: 0x0800 + dims
/// (2049 labels, 2051 images).
constexpr std::uint32_t idx_magic(std::size_t dims) { return 0x0800u + static_cast<std::uint32_t>(dims); }

}  // namespace vqa
