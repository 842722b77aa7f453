#include "io/staged_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "io/durable_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// The temporaries to remove should SIGINT or SIGTERM end the process. The handler may only
// read fixed storage and call async-signal-safe functions (unlink, sigaction, raise), so the
// paths live in fixed slots; a temporary that finds no free slot is only removed on errors.
constexpr int kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> g_paths;
std::array<std::atomic<bool>, kSlots> g_in_use{};
constexpr std::array<int, 2> kInterrupts = {SIGINT, SIGTERM};
std::array<struct sigaction, 2> g_previous{};
std::array<bool, 2> g_installed{};
std::mutex g_mutex;  // claiming and releasing slots, installing the handlers
int g_users = 0;     // staged files alive or being made: the handlers are installed while > 0
// While > 0 an interrupt waits (InterruptsDeferred); the last one that arrived meanwhile.
std::atomic<int> g_deferring{0};
std::atomic<int> g_pending{0};

void remove_temporaries_and_end(int signal_number) {
  if (g_deferring.load() > 0) {
    g_pending.store(signal_number);
    return;
  }
  for (int i = 0; i < kSlots; ++i)
    if (g_in_use[i].load()) ::unlink(g_paths[i].data());
  // What the signal would have done without us (end the process, or a handler of the
  // program's own), once this handler returns.
  for (std::size_t s = 0; s < kInterrupts.size(); ++s)
    if (kInterrupts[s] == signal_number) ::sigaction(signal_number, &g_previous[s], nullptr);
  ::raise(signal_number);
}

void use_handlers() {
  std::lock_guard lock(g_mutex);
  if (g_users++ > 0) return;
  for (std::size_t s = 0; s < kInterrupts.size(); ++s) {
    struct sigaction previous {};
    ::sigaction(kInterrupts[s], nullptr, &previous);
    // An ignored signal (nohup, a background job) stays ignored.
    if (previous.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_end;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(kInterrupts[s], &action, &g_previous[s]);
    g_installed[s] = true;
  }
}

void stop_using_handlers() {
  std::lock_guard lock(g_mutex);
  if (--g_users > 0) return;
  for (std::size_t s = 0; s < kInterrupts.size(); ++s)
    if (g_installed[s]) {
      ::sigaction(kInterrupts[s], &g_previous[s], nullptr);
      g_installed[s] = false;
    }
}

int claim_slot(const fs::path& path) {
  const std::string text = fs::absolute(path).string();
  if (text.size() >= kPathBytes) return -1;
  std::lock_guard lock(g_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (g_in_use[i].load()) continue;
    std::memcpy(g_paths[i].data(), text.c_str(), text.size() + 1);
    g_in_use[i].store(true);
    return i;
  }
  return -1;
}

void release_slot(int& slot) {
  if (slot < 0) return;
  std::lock_guard lock(g_mutex);
  g_in_use[slot].store(false);
  slot = -1;
}

bool same_file(int fd, const fs::path& path) {
  struct stat opened {}, named {};
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 &&
         opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

// While it lives, SIGINT and SIGTERM wait, in whichever thread they arrive, so that files
// change hands (a temporary is created and claimed; temporaries are renamed into place)
// without a moment in which an interrupt would leave a temporary behind, remove another
// process's, or rename half of a set. One that arrived meanwhile takes effect at its end.
class InterruptsDeferred {
 public:
  InterruptsDeferred() { g_deferring.fetch_add(1); }
  ~InterruptsDeferred() {
    if (g_deferring.fetch_sub(1) == 1)
      if (const int signal_number = g_pending.exchange(0); signal_number != 0)
        ::raise(signal_number);
  }
  InterruptsDeferred(const InterruptsDeferred&) = delete;
  InterruptsDeferred& operator=(const InterruptsDeferred&) = delete;
};

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
  use_handlers();
  try {
    const InterruptsDeferred deferred;
    lock_fd_ = open_and_lock(temporary_, final_);
    // What a killed command left there is not ours to keep.
    if (::ftruncate(lock_fd_, 0) != 0)
      throw Error(fmt::format("cannot write '{}': {}", temporary_.string(),
                              std::strerror(errno)));
    cleanup_slot_ = claim_slot(temporary_);
  } catch (...) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    stop_using_handlers();
    throw;
  }
}

StagedFile::~StagedFile() {
  if (!committed_) ::unlink(temporary_.c_str());
  release_slot(cleanup_slot_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
  stop_using_handlers();
}

void commit_staged_files(std::initializer_list<StagedFile*> files) {
  const InterruptsDeferred deferred;
  for (StagedFile* file : files) {
    // The lock's descriptor is the temporary itself: its data reaches the disk before its
    // new name does.
    if (::fsync(file->lock_fd_) != 0)
      throw Error(fmt::format("cannot write '{}': {}", file->temporary_.string(),
                              std::strerror(errno)));
    rename_durably(file->temporary_, file->final_);
    file->committed_ = true;
    // Its name is no longer ours: an interrupt must not remove a new writer's temporary.
    release_slot(file->cleanup_slot_);
  }
}

}  // namespace pfc
