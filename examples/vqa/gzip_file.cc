#include "gzip_file.h"

#include <zlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vqa {
namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw std::runtime_error(file.string() + ": " + what);
}

}  // namespace

std::string read_gzip(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, "cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string compressed = buffer.str();
  if (compressed.size() < 2 || static_cast<unsigned char>(compressed[0]) != 0x1f ||
      static_cast<unsigned char>(compressed[1]) != 0x8b)
    fail(file, "not a gzip file (no magic bytes 1f 8b)");

  std::string out;
  std::size_t position = 0;
  while (position < compressed.size()) {
    // Zero padding after a member ends the file (as gzip -d accepts it).
    if (compressed.find_first_not_of('\0', position) == std::string::npos) break;
    if (compressed.size() - position < 2 || static_cast<unsigned char>(compressed[position]) != 0x1f ||
        static_cast<unsigned char>(compressed[position + 1]) != 0x8b)
      fail(file, "trailing bytes after the gzip data at byte " + std::to_string(position));
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) fail(file, "zlib inflateInit2 failed");
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + position));
    stream.avail_in = static_cast<uInt>(compressed.size() - position);
    char chunk[1 << 16];
    int status = Z_OK;
    while (status == Z_OK) {
      stream.next_out = reinterpret_cast<Bytef*>(chunk);
      stream.avail_out = sizeof chunk;
      status = inflate(&stream, Z_NO_FLUSH);
      out.append(chunk, sizeof chunk - stream.avail_out);
      if (status == Z_BUF_ERROR && stream.avail_in == 0) break;  // input used up before the end
    }
    const std::string message = stream.msg != nullptr ? stream.msg : "";
    const std::size_t used = compressed.size() - position - stream.avail_in;
    inflateEnd(&stream);
    if (status == Z_BUF_ERROR)
      fail(file, "truncated: the gzip stream ends early (after " + std::to_string(compressed.size()) + " bytes)");
    if (status != Z_STREAM_END) fail(file, "corrupted gzip data (zlib: " + (message.empty() ? "error " + std::to_string(status) : message) + ")");
    position += used;
  }
  return out;
}

}  // namespace vqa
