// Where the ranks of a job agree to stop: a signal (core/stop_signals.h) reaches one rank, or
// some, at different moments; a stop at a safe point must be taken by all of them at the same
// one, or the others would wait in the next collective.
#pragma once

#include "comm/comm.h"

namespace pfc {

// Collective: true on every rank when any rank was asked to stop.
bool agree_to_stop(Comm& comm);

}  // namespace pfc
