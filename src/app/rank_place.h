// Where one MPI process computes and how it talks to the others: on cuda, the GPU of its
// node-local rank with NCCL between the ranks; on the CPU, MPI. Shared by every command that
// runs on the ranks of an mpiexec or srun job (train, golden).
#pragma once

#include <memory>

#include "backend/backend.h"
#include "comm/comm.h"

namespace pfc {

// The comm goes first on destruction (NcclComm holds the backend's stream).
struct RankPlace {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Comm> comm;
};

// Collective over MPI_COMM_WORLD. A collective that some rank has not joined after
// collective_timeout_s (0: never) ends the run on every rank that waits (MpiComm; NcclComm's
// host-side collectives).
RankPlace make_rank_place(BackendKind kind, double collective_timeout_s);

}  // namespace pfc
