// How a run stops early. SIGTERM (a scheduler ending the job) and SIGUSR1 (Slurm's warning
// before the time limit) only set a flag; at the next step boundary every rank agrees to stop,
// so the trainer can write a checkpoint and exit cleanly. PFC_FAULT="rank:R,step:S" makes rank
// R fail at step S, to test that a run resumes after a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "comm/comm.h"

namespace pfc {

// Installs the handlers for SIGTERM and SIGUSR1. A second SIGTERM terminates at once.
void install_stop_signal_handlers();
// Whether this process was asked to stop (by a signal or request_stop()).
bool stop_requested();
void request_stop();
// Forgets a request (a new run in the same process starts clean).
void clear_stop_request();
// Collective: true on every rank when any rank was asked to stop.
bool agree_to_stop(Comm& comm);

struct InjectedFault {
  int rank = 0;
  std::int64_t step = 0;
};

// "rank:R,step:S" (either order); "" is no fault. Anything else is a UsageError.
std::optional<InjectedFault> parse_injected_fault(std::string_view spec);
// The fault PFC_FAULT asks for, if set.
std::optional<InjectedFault> injected_fault_from_environment();
// Throws pfc::Error("injected fault on rank R at step S") when this is that rank and step.
void check_injected_fault(const std::optional<InjectedFault>& fault, int rank,
                          std::int64_t step);

}  // namespace pfc
