// How a run stops early. SIGTERM (a scheduler ending the job) and SIGUSR1 (Slurm's warning
// before the time limit) only set a flag; at the next step boundary every rank agrees to stop,
// so the trainer can write a checkpoint and exit cleanly. (Injected crashes:
// core/fault_injection.h.)
#pragma once

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

}  // namespace pfc
