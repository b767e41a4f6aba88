// Atomic replacement of an output file (kit/atomic_file.h).
#include "kit/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace kit {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int error) {
  throw std::runtime_error("cannot write " + path.string() + ": " + what + " (" + std::strerror(error) + ")");
}

}  // namespace

void write_atomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(static_cast<long long>(::getpid()));

  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot create " + temp.string(), errno);

  auto abandon = [&](const std::string& what, int error) {
    ::close(fd);
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    fail(path, what, error);
  };

  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      abandon("write to " + temp.string() + " failed", errno);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::fsync(fd) != 0) abandon("fsync of " + temp.string() + " failed", errno);
  if (::close(fd) != 0) {
    const int error = errno;
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    fail(path, "close of " + temp.string() + " failed", error);
  }

  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw std::runtime_error("cannot write " + path.string() + ": rename from " + temp.string() +
                             " failed (" + ec.message() + ")");
  }

  // Make the rename itself durable; not every file system allows fsync on a directory.
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file(const std::filesystem::path& path, std::string_view content) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create the directory of " + path.string() + ": " + ec.message());
  }
  write_atomically(path, content);
}

}  // namespace kit
