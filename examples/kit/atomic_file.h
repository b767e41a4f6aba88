// Writing an output file so that a crash never leaves it half-written.
#pragma once

#include <filesystem>
#include <string_view>

namespace kit {

/// Writes content to path + ".tmp.<pid>" in the same directory, flushes and fsyncs it, then
/// renames it over path (atomic on POSIX file systems), and fsyncs the directory (best effort).
/// Throws std::runtime_error naming the path when any step fails; the temporary file is removed
/// then.
void write_atomically(const std::filesystem::path& path, std::string_view content);

/// write_atomically after creating the parent directories of path. Throws std::runtime_error
/// naming the directory or the file on failure.
void write_file(const std::filesystem::path& path, std::string_view content);

}  // namespace kit
