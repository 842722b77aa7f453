#include "io/staged_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/durable_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

bool same_file(int fd, const fs::path& path) {
  struct stat opened {}, named {};
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 &&
         opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

// Opens and locks `temporary` (see the constructor); the descriptor.
int open_and_lock(const fs::path& temporary, const fs::path& final_path) {
  // Opened without truncating: another process's temporary must survive our look at it; and
  // without following a link, which would make whatever it names ours to truncate. The rename
  // of a finished one can come between open and flock, so the lock must be on the file that
  // still has the name.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      throw Error(fmt::format("cannot create '{}': {}", temporary.string(),
                              std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int saved_errno = errno;
      ::close(fd);
      if (saved_errno == EWOULDBLOCK)
        throw UsageError(fmt::format("'{}' is being written by another process now (it holds "
                                     "'{}'); wait until it ends, or write another file",
                                     final_path.string(), temporary.string()));
      throw Error(fmt::format("cannot lock '{}': {}", temporary.string(),
                              std::strerror(saved_errno)));
    }
    if (same_file(fd, temporary)) return fd;
    ::close(fd);
  }
  throw Error(fmt::format("cannot take hold of '{}': other processes keep replacing it",
                          temporary.string()));
}

}  // namespace

StagedFile::StagedFile(fs::path final_path)
    : final_(std::move(final_path)), temporary_(final_.string() + ".tmp") {
  install_stop_signal_handlers();
  try {
    const SignalsDeferred deferred;
    lock_fd_ = open_and_lock(temporary_, final_);
    // What a killed command left there is not ours to keep.
    if (::ftruncate(lock_fd_, 0) != 0)
      throw Error(fmt::format("cannot write '{}': {}", temporary_.string(),
                              std::strerror(errno)));
    removed_on_signal_ = RemovedOnSignal(temporary_, RemovedOnSignal::Kind::file);
  } catch (...) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    throw;
  }
}

StagedFile::~StagedFile() {
  if (!committed_) ::unlink(temporary_.c_str());
  removed_on_signal_.forget();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void commit_staged_files(std::initializer_list<StagedFile*> files) {
  const SignalsDeferred deferred;
  for (StagedFile* file : files) {
    // The lock's descriptor is the temporary itself: its data reaches the disk before its
    // new name does.
    if (::fsync(file->lock_fd_) != 0)
      throw Error(fmt::format("cannot write '{}': {}", file->temporary_.string(),
                              std::strerror(errno)));
    rename_durably(file->temporary_, file->final_);
    file->committed_ = true;
    // Its name is no longer ours: an interrupt must not remove a new writer's temporary.
    file->removed_on_signal_.forget();
  }
}

}  // namespace pfc
