#include "idx.h"

#include <stdexcept>

namespace vqa {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw std::runtime_error(source + ": " + what);
}

std::uint32_t big_endian(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

}  // namespace

IdxArray parse_idx(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 4) fail(source, "truncated: " + std::to_string(bytes.size()) + " bytes, no IDX header");
  const std::uint32_t magic = big_endian(bytes, 0);
  if ((magic >> 16) != 0) fail(source, "not an IDX file (magic number " + std::to_string(magic) + ")");
  const std::uint32_t type = (magic >> 8) & 0xff, dims = magic & 0xff;
  if (type != 0x08) fail(source, "IDX data type " + std::to_string(type) + " is not 8 (unsigned bytes)");
  if (dims < 1 || dims > 8) fail(source, "IDX header announces " + std::to_string(dims) + " dimensions (1 to 8 read)");
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(dims);
  if (bytes.size() < header) fail(source, "truncated: the IDX header lacks its sizes");
  IdxArray out;
  std::size_t count = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::size_t n = big_endian(bytes, 4 + 4 * d);
    out.sizes.push_back(n);
    if (n != 0 && count > (std::size_t{1} << 40) / n) fail(source, "IDX sizes too large");
    count *= n;
  }
  const std::size_t present = bytes.size() - header;
  if (present < count)
    fail(source, "truncated: " + std::to_string(present) + " data bytes, the header announces " + std::to_string(count));
  if (present > count) fail(source, std::to_string(present - count) + " bytes after the data the IDX header announces");
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

}  // namespace vqa
