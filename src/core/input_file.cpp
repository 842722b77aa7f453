#include "core/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace pfc {

namespace {

// "a folder", "a FIFO (named pipe)", ...: what a stat says a path is, when not a regular file.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string not_a_file(mode_t mode) { return fmt::format("is {}, not a file", kind_of(mode)); }

std::string open_failure(int error) {
  if (error == ENOENT) return "does not exist";
  return fmt::format("cannot be opened: {}", std::strerror(error));
}

}  // namespace

std::string byte_count_text(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return value == static_cast<double>(static_cast<std::uint64_t>(value))
             ? fmt::format("{} {}", static_cast<std::uint64_t>(value), kUnits[unit])
             : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string non_file_kind(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return open_failure(errno);
  return S_ISREG(st.st_mode) ? "" : fmt::format("is {}", kind_of(st.st_mode));
}

std::optional<InputFile> InputFile::open(const std::filesystem::path& path,
                                         const InputFileLimit& limit, std::string& why) {
  // Looked at before it is opened: opening a device can act on it (a tape rewinds).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = open_failure(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = not_a_file(st.st_mode);
    return std::nullopt;
  }
  // Non-blocking, in case it became a FIFO since: opening a FIFO waits for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    why = open_failure(errno);
    return std::nullopt;
  }
  InputFile file(fd, 0, path);
  if (::fstat(fd, &st) != 0) {
    why = fmt::format("cannot be read: {}", std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = not_a_file(st.st_mode);
    return std::nullopt;
  }
  file.size_ = static_cast<std::uint64_t>(st.st_size);
  if (file.size_ > limit.bytes) {
    why = fmt::format("holds {} bytes ({}), more than {}", file.size_,
                      byte_count_text(file.size_), limit.name);
    return std::nullopt;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return file;
}

InputFile InputFile::open_or_refuse(const std::filesystem::path& path, const std::string& what,
                                    const InputFileLimit& limit) {
  std::string why;
  std::optional<InputFile> file = open(path, limit, why);
  if (!file) throw UsageError(fmt::format("'{}' ({}) {}", path.string(), what, why));
  return std::move(*file);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::read_all(std::vector<std::uint8_t>& bytes, std::string& why) const {
  bytes.resize(size_);
  std::uint64_t done = 0;
  while (done < size_) {
    const ssize_t n = ::pread(fd_, bytes.data() + done, size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = fmt::format("cannot be read: {}", std::strerror(errno));
      return false;
    }
    if (n == 0) {
      why = fmt::format("changed while it was read: it held {} bytes, then {}", size_, done);
      return false;
    }
    done += static_cast<std::uint64_t>(n);
  }
  return true;
}

std::vector<std::uint8_t> InputFile::head(std::size_t n) const {
  std::vector<std::uint8_t> bytes(std::min<std::uint64_t>(n, size_));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::pread(fd_, bytes.data() + done, bytes.size() - done,
                                static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

bool read_input_file(const std::filesystem::path& path, const InputFileLimit& limit,
                     std::vector<std::uint8_t>& bytes, std::string& why) {
  const std::optional<InputFile> file = InputFile::open(path, limit, why);
  return file && file->read_all(bytes, why);
}

}  // namespace pfc
