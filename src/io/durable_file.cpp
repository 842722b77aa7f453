#include "io/durable_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace pfc {

namespace {

std::string folder_of(const std::filesystem::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

void sync_path(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(fmt::format("cannot open '{}' to sync it: {}", path.string(),
                            std::strerror(errno)));
  const int status = ::fsync(fd);
  const int saved_errno = errno;
  ::close(fd);
  // Some file systems cannot fsync a folder (EINVAL); the data itself was synced already.
  if (status != 0 && saved_errno != EINVAL)
    throw Error(fmt::format("cannot sync '{}': {}", path.string(), std::strerror(saved_errno)));
}

void replace_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  try {
    write_file_durably(temporary, text);
    rename_durably(temporary, path);
  } catch (const Error&) {
    // A full disk must not leave the temporary behind, where it would take the space freed
    // later and look like part of the folder's contents.
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

void write_file_durably(const std::filesystem::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("cannot create '{}': {}", path.string(), std::strerror(errno)));
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved_errno = errno;
      ::close(fd);
      throw Error(fmt::format("cannot write '{}': {}", path.string(),
                              std::strerror(saved_errno)));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  // fsync, then close: either may be where a full disk or an I/O error shows.
  const int synced = ::fsync(fd);
  const int sync_errno = errno;
  const int closed = ::close(fd);
  const int close_errno = errno;
  if (synced != 0 || closed != 0)
    throw Error(fmt::format("cannot write '{}': {}", path.string(),
                            std::strerror(synced != 0 ? sync_errno : close_errno)));
}

void rename_durably(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec)
    throw Error(fmt::format("cannot rename '{}' to '{}': {}", from.string(), to.string(),
                            ec.message()));
  sync_path(folder_of(to));
}

}  // namespace pfc
