#include "app/address_space_floor.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "app/thread_layout.h"
#include "core/error.h"

namespace pfc {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The addresses this process has mapped (its executable and libraries), or 0 when unknown.
double mapped_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return 0;
  return std::strtod(text, nullptr) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

// The value of NAME in `environment` (the C library's getenv is not ready this early).
const char* variable(char** environment, std::string_view name) {
  for (char** entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.size() > name.size() && text.starts_with(name) && text[name.size()] == '=')
      return *entry + name.size() + 1;
  }
  return nullptr;
}

// The CPU threads a rank will run, as app/thread_layout.h chooses them at most (a count beyond
// its limit is refused there, with its own message).
double threads(char** environment) {
  const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  long most = 0;
  for (const char* name : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"})
    if (const char* text = variable(environment, name))
      most = std::max(most, std::strtol(text, nullptr, 10));
  return static_cast<double>(most > 0 ? std::min(most, kThreadsPerCpu * cpus) : cpus);
}

}  // namespace

void refuse_too_small_address_space(char** environment) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const double mapped = mapped_bytes();
  const double thread_count = threads(environment);
  const double headroom = kStartHeadroomGiB + thread_count * kHeadroomPerThreadGiB;
  const double need = mapped + headroom * kGiB;
  const double have = static_cast<double>(limit.rlim_cur);
  if (have >= need) return;
  char message[640];
  const int length = std::snprintf(
      message, sizeof message,
      "pfc: the address-space limit (ulimit -v) is %.2f GiB, and pfc needs at least %.2f GiB "
      "to start: its libraries (CUDA, MPI, OpenMP, OpenBLAS, oneDNN) take %.2f GiB of "
      "addresses before it runs, and their start-up and %.0f thread(s) %.2f GiB more. Raise it "
      "(ulimit -v unlimited), or limit memory instead of addresses (a cgroup: Slurm's --mem, "
      "systemd-run -p MemoryMax=...)\n",
      have / kGiB, need / kGiB, mapped / kGiB, thread_count, headroom);
  if (length > 0)
    [[maybe_unused]] const ssize_t written =
        ::write(STDERR_FILENO, message, static_cast<std::size_t>(length));
  ::_exit(kExitUsage);
}

}  // namespace pfc
