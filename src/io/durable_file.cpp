#include "io/durable_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

std::string folder_of(const fs::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? "." : parent.string();
}

// Writes all of `text` to `fd`; on failure closes it and throws, naming `path`.
void write_all(int fd, const std::string& text, const fs::path& path) {
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
}

// Opens a FIFO, device or socket for writing. A FIFO opens only once a reader has it open;
// it is waited for up to `fifo_wait_s` seconds.
int open_in_place(const fs::path& path, bool fifo, double fifo_wait_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(fifo_wait_s);
  while (true) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
    if (fd >= 0) {
      if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      return fd;
    }
    const int saved_errno = errno;
    const bool no_reader = fifo && saved_errno == ENXIO;
    if (!no_reader || std::chrono::steady_clock::now() >= deadline)
      throw Error(fmt::format("cannot write '{}': {}", path.string(),
                              no_reader
                                  ? fmt::format("no process opened the FIFO for reading "
                                                "within {} s",
                                                fifo_wait_s)
                                  : std::string(std::strerror(saved_errno))));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

fs::path follow_links(fs::path path) {
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
    if (hops == 40)
      throw Error(fmt::format("'{}': too many levels of symbolic links",
                              path.string()));
    const fs::path target = fs::read_symlink(path, ec);
    if (ec) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

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

void write_whole_file(const fs::path& path, const std::string& text, double fifo_wait_s) {
  const fs::path target = follow_links(path);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (!fs::exists(status) || fs::is_regular_file(status)) {
    replace_file_atomically(target, text);
    return;
  }
  if (fs::is_directory(status))
    throw Error(fmt::format("cannot write '{}': it is a folder", path.string()));
  const int fd = open_in_place(target, fs::is_fifo(status), fifo_wait_s);
  write_all(fd, text, path);
  if (::close(fd) != 0)
    throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
}

void write_file_durably(const std::filesystem::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("cannot create '{}': {}", path.string(), std::strerror(errno)));
  write_all(fd, text, path);
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
