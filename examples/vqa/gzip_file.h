// Reading a gzip file whole (zlib), with errors that name the file.
#pragma once

#include <filesystem>
#include <string>

namespace vqa {

/// The decompressed bytes of the gzip file `file` (one or more gzip members, RFC 1952; zlib's
/// inflate with automatic gzip header detection, CRC-32 and length checked by zlib). Throws
/// std::runtime_error whose message starts with the file name and says what is wrong:
///   "<file>: cannot open"                          (missing or unreadable)
///   "<file>: not a gzip file"                      (no gzip magic 1f 8b)
///   "<file>: truncated: the gzip stream ends early" (a file cut short)
///   "<file>: corrupted gzip data (zlib: <msg>)"    (bad data or checksum)
/// Bytes after the last member other than zero padding are an error ("trailing bytes").
std::string read_gzip(const std::filesystem::path& file);

}  // namespace vqa
