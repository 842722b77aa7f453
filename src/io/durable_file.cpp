#include "io/durable_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

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
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << text;
      out.flush();
      if (!out) throw Error(fmt::format("cannot write '{}'", temporary.string()));
    }
    sync_path(temporary);
    rename_durably(temporary, path);
  } catch (const Error&) {
    // A partial file must not stay behind (a full disk); `path` itself was never touched.
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
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
