// pfc train's memory check (config memory_check, on by default): before anything real is
// allocated, the run is planned on the meta device (plan/run_plan.h: one step of the same code,
// the same comm world) and its need per rank held against what the rank has: the arena a CUDA
// backend would reserve on its GPU, or this host's available memory (MemAvailable, or the
// cgroup's limit less its usage) shared by the ranks on the node. A run that does not fit is
// refused with "needs X GiB per rank, Y available" and exit 2, on every rank alike.
#pragma once

#include "config/config.h"

namespace pfc {

// Collective over MPI_COMM_WORLD (or one emulating process); throws pfc::UsageError.
void check_run_fits(const Config& cfg);

}  // namespace pfc
