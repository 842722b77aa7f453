#include "train/run_control.h"

#include <atomic>
#include <csignal>

#include "core/error.h"

namespace pfc {

namespace {

// Written from a signal handler: a lock-free atomic is async-signal-safe.
std::atomic<int> g_stop_requested{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int) { g_stop_requested.store(1, std::memory_order_relaxed); }

void install(int signal_number, int flags) {
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a blocking read or MPI progress call interrupted by the signal resumes.
  action.sa_flags = SA_RESTART | flags;
  PFC_CHECK(sigaction(signal_number, &action, nullptr) == 0,
            "cannot install the handler for signal {}", signal_number);
}

}  // namespace

void install_stop_signal_handlers() {
  // SA_RESETHAND on SIGTERM: the first asks for a clean stop, a second one kills.
  install(SIGTERM, SA_RESETHAND);
  install(SIGUSR1, 0);
}

bool stop_requested() { return g_stop_requested.load(std::memory_order_relaxed) != 0; }
void request_stop() { g_stop_requested.store(1, std::memory_order_relaxed); }
void clear_stop_request() { g_stop_requested.store(0, std::memory_order_relaxed); }

bool agree_to_stop(Comm& comm) {
  return comm.all_reduce_scalar(stop_requested() ? 1.0 : 0.0, ReduceOp::max) > 0.0;
}

}  // namespace pfc
