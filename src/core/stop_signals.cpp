#include "core/stop_signals.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

namespace pfc {

namespace {

constexpr std::array<int, 5> kEndingSignals = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1};

// Written and read by the handler: lock-free atomics are async-signal-safe.
std::atomic<int> g_stop_requested{0};
std::atomic<int> g_grace_seconds{0};  // > 0: stop at safe points (stop_at_safe_points)
std::atomic<int> g_first_signal{0};   // the ending signal that asked for the stop
std::atomic<long long> g_first_ns{0};  // when it came (CLOCK_MONOTONIC)
std::atomic<int> g_deferring{0};      // SignalsDeferred alive
std::atomic<int> g_pending{0};        // the signal that waits for them to be gone
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<long long>::is_always_lock_free);

// A signal this soon after the first is the same request delivered twice, not a second one: a
// scheduler signals every process of a job, and the launcher (srun, mpiexec) forwards the
// signal it got to the same ranks, milliseconds apart.
constexpr long long kSameRequestNs = 500'000'000;

long long monotonic_ns() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return static_cast<long long>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// The paths to remove, in fixed storage the handler may read: a slot's kind is written last
// when it is claimed and first when it is freed, so the handler never reads a half-copied path.
constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;
enum SlotKind : int { kFree = 0, kFile = 1, kTree = 2 };
std::array<std::array<char, kPathBytes>, kSlots> g_paths;
std::array<std::atomic<int>, kSlots> g_kinds{};
std::mutex g_slots_mutex;  // claiming and freeing slots (never taken by the handler)

bool is_dot_or_dot_dot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// Removes `name` (relative to the folder `dir_fd`) and, when it is a folder, everything under
// it, `depth` levels down at most. Links are removed, never followed.
void remove_entry(int dir_fd, const char* name, int depth) {
  if (::unlinkat(dir_fd, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  if (depth == 0) return;
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  // Entries removed while the folder is read may hide others from the same pass: read it
  // again until a pass finds nothing to remove.
  for (int pass = 0; pass < 4; ++pass) {
    bool removed = false;
    ::lseek(fd, 0, SEEK_SET);
    alignas(struct dirent64) char buffer[1024];
    for (;;) {
      const ssize_t bytes = ::getdents64(fd, buffer, sizeof buffer);
      if (bytes <= 0) break;
      for (ssize_t offset = 0; offset < bytes;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        if (is_dot_or_dot_dot(entry->d_name)) continue;
        remove_entry(fd, entry->d_name, depth - 1);
        removed = true;
      }
    }
    if (!removed) break;
  }
  ::close(fd);
  ::unlinkat(dir_fd, name, AT_REMOVEDIR);
}

// The MPI session folder is 5 levels deep (ompi.HOST.UID/jf.0/JOB/RANK/...); 16 is plenty.
constexpr int kTreeDepth = 16;

[[noreturn]] void end_process(int signal_number) {
  for (int i = 0; i < kSlots; ++i) {
    const int kind = g_kinds[i].load();
    if (kind == kFile) ::unlink(g_paths[i].data());
    if (kind == kTree) remove_entry(AT_FDCWD, g_paths[i].data(), kTreeDepth);
  }
  // What the signal does without a handler: the parent sees the process ended by it.
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal_number, &action, nullptr);
  sigset_t unblocked;
  sigemptyset(&unblocked);
  sigaddset(&unblocked, signal_number);
  ::sigprocmask(SIG_UNBLOCK, &unblocked, nullptr);
  ::raise(signal_number);
  ::_exit(128 + signal_number);  // a signal whose default action would not end the process
}

void end_unless_deferred(int signal_number) {
  if (g_deferring.load() == 0) end_process(signal_number);
  g_pending.store(signal_number);
  // The last SignalsDeferred may have gone between the two looks: then nobody else will.
  if (g_deferring.load() == 0)
    if (const int pending = g_pending.exchange(0); pending != 0) end_process(pending);
}

void handle(int signal_number) {
  const int grace = g_grace_seconds.load();
  if (signal_number == SIGALRM) {
    // The grace period after the first ending signal has passed without the stop.
    if (const int first = g_first_signal.load(); grace > 0 && first != 0)
      end_unless_deferred(first);
    return;
  }
  if (grace > 0) {
    if (signal_number == SIGUSR1) {
      g_stop_requested.store(1);
      return;
    }
    int none = 0;
    if (g_first_signal.compare_exchange_strong(none, signal_number)) {
      g_first_ns.store(monotonic_ns());
      g_stop_requested.store(1);
      ::alarm(static_cast<unsigned>(grace));
      return;
    }
    if (monotonic_ns() - g_first_ns.load() < kSameRequestNs) return;
  }
  end_unless_deferred(signal_number);
}

extern "C" void on_ending_signal(int signal_number) {
  const int saved_errno = errno;
  handle(signal_number);
  errno = saved_errno;
}

void install_handler(int signal_number) {
  struct sigaction current {};
  if (::sigaction(signal_number, nullptr, &current) != 0) return;
  if (current.sa_handler == SIG_IGN || current.sa_handler == on_ending_signal) return;
  struct sigaction action {};
  action.sa_handler = on_ending_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a read or an MPI progress call interrupted by a stop request resumes.
  action.sa_flags = SA_RESTART;
  ::sigaction(signal_number, &action, nullptr);
}

void disarm_grace_period() {
  if (g_first_signal.exchange(0) != 0) ::alarm(0);
}

}  // namespace

void install_stop_signal_handlers() {
  for (const int signal_number : kEndingSignals) install_handler(signal_number);
}

void stop_at_safe_points(int grace_seconds) {
  install_stop_signal_handlers();
  install_handler(SIGALRM);
  g_grace_seconds.store(grace_seconds > 0 ? grace_seconds : 1);
}

void end_at_once_on_signals() {
  g_grace_seconds.store(0);
  disarm_grace_period();
}

bool stop_requested() { return g_stop_requested.load() != 0; }
void request_stop() { g_stop_requested.store(1); }
void clear_stop_request() {
  g_stop_requested.store(0);
  disarm_grace_period();
}

RemovedOnSignal::RemovedOnSignal(const std::filesystem::path& path, Kind kind) {
  std::error_code ec;
  const std::string text = std::filesystem::absolute(path, ec).string();
  if (ec || text.size() >= kPathBytes) return;
  std::lock_guard lock(g_slots_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (g_kinds[i].load() != kFree) continue;
    std::memcpy(g_paths[i].data(), text.c_str(), text.size() + 1);
    g_kinds[i].store(kind == Kind::file ? kFile : kTree);
    slot_ = i;
    return;
  }
}

RemovedOnSignal& RemovedOnSignal::operator=(RemovedOnSignal&& other) noexcept {
  if (this != &other) {
    forget();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void RemovedOnSignal::forget() {
  if (slot_ < 0) return;
  std::lock_guard lock(g_slots_mutex);
  g_kinds[slot_].store(kFree);
  slot_ = -1;
}

SignalsDeferred::SignalsDeferred() { g_deferring.fetch_add(1); }

SignalsDeferred::~SignalsDeferred() {
  if (g_deferring.fetch_sub(1) == 1)
    if (const int pending = g_pending.exchange(0); pending != 0) end_process(pending);
}

}  // namespace pfc
