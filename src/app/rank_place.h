// Where one MPI process computes and how it talks to the others: on cuda, the GPU of its
// node-local rank with NCCL between the ranks; on the CPU (and for a plan, the meta device),
// MPI; for an emulated run, one process playing one rank of a larger world through
// EmulatedComm. Shared by every command that runs on the ranks of an mpiexec or srun job.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "comm/comm.h"
#include "config/config.h"

namespace pfc {

// The comm goes first on destruction (NcclComm holds the backend's stream).
struct RankPlace {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Comm> comm;
};

// Collective over MPI_COMM_WORLD. A collective that some rank has not joined after
// collective_timeout_s (0: never) ends the run on every rank that waits (MpiComm; NcclComm's
// host-side collectives). plan_for: what a meta backend plans.
RankPlace make_rank_place(BackendKind kind, double collective_timeout_s,
                          BackendKind plan_for = BackendKind::cuda);

// The place a run of cfg has (cfg.device, cfg.plan_for, cfg.collective_timeout_s): emulated
// (emulate_world_size > 0: pfc::UsageError unless this is the only MPI process) or on the
// job's ranks.
RankPlace make_run_place(const Config& cfg);

// The GPU this process drives in a cuda run (its node-local rank's); 0 on the CPU.
int rank_device_ordinal(BackendKind kind);
// How many of the job's ranks run on this node (they share its host memory).
int ranks_on_this_node();

}  // namespace pfc
