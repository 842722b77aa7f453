#include "train/run_control.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <string>

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

std::int64_t parse_number(std::string_view text, std::string_view spec) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw UsageError(fmt::format(
        "PFC_FAULT '{}': '{}' is not a non-negative integer (expected \"rank:R,step:S\")", spec,
        text));
  return value;
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

std::optional<InjectedFault> parse_injected_fault(std::string_view spec) {
  if (spec.empty()) return std::nullopt;
  std::optional<std::int64_t> rank, step;
  for (std::size_t begin = 0; begin <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string_view item = spec.substr(begin, comma - begin);
    begin = comma + 1;
    const std::size_t colon = item.find(':');
    const std::string_view key = item.substr(0, colon);
    if (colon == std::string_view::npos || (key != "rank" && key != "step") ||
        (key == "rank" ? rank : step).has_value())
      throw UsageError(fmt::format(
          "PFC_FAULT '{}': cannot read '{}' (expected \"rank:R,step:S\", e.g. rank:1,step:20)",
          spec, item));
    (key == "rank" ? rank : step) = parse_number(item.substr(colon + 1), spec);
  }
  if (!rank || !step)
    throw UsageError(fmt::format("PFC_FAULT '{}': needs both rank and step (\"rank:R,step:S\")",
                                 spec));
  if (*rank > std::numeric_limits<int>::max())
    throw UsageError(fmt::format("PFC_FAULT '{}': rank {} is out of range", spec, *rank));
  return InjectedFault{static_cast<int>(*rank), *step};
}

std::optional<InjectedFault> injected_fault_from_environment() {
  const char* spec = std::getenv("PFC_FAULT");
  return parse_injected_fault(spec ? spec : "");
}

void check_injected_fault(const std::optional<InjectedFault>& fault, int rank,
                          std::int64_t step) {
  if (fault && fault->rank == rank && fault->step == step)
    throw Error(fmt::format("injected fault on rank {} at step {}", rank, step));
}

}  // namespace pfc
