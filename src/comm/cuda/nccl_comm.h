// NcclComm: the Comm of multi-GPU runs. Collectives move device tensors with NCCL, one GPU
// per rank; the ranks are those of an MPI communicator, which also carries the ncclUniqueId
// and the host scalars (all_reduce_scalar). NCCL work runs on its own stream, ordered after
// everything already queued on the backend's stream and before anything queued there later
// (two events per collective), so callers see collectives as if they ran on the backend's
// stream.
//
// Usage, per rank:
//   int device = nccl_device_ordinal(MPI_COMM_WORLD);   // node-local rank
//   auto backend = std::make_unique<CudaBackend>(device);
//   std::unique_ptr<Comm> comm = make_nccl_comm(*backend, MPI_COMM_WORLD);
// The backend must outlive the comm, and the comm must be destroyed before MPI_Finalize.
#pragma once

#include <mpi.h>

#include <memory>

#include "backend/backend.h"
#include "comm/comm.h"

namespace pfc {

// The GPU this rank should drive: its rank among the processes on its node
// (MPI_Comm_split_type SHARED), or 0 where the rank sees a single GPU (the launcher bound
// one per task). Throws when the node has more ranks than visible GPUs otherwise (NCCL
// cannot put two ranks on one device).
int nccl_device_ordinal(MPI_Comm comm);

// `backend` must be a CudaBackend (throws pfc::Error otherwise) on the GPU
// nccl_device_ordinal() chose. Collective: every rank of `comm` must call it. The host-side
// collectives (all_reduce_scalar, barrier) go through an MpiComm with collective_timeout_s
// (0: wait forever); the NCCL collectives themselves are not watched: a rank that stops while
// its peers wait in an NCCL kernel leaves them waiting in the device (ending that takes
// ncclCommAbort from a watchdog thread, as PyTorch does).
std::unique_ptr<Comm> make_nccl_comm(Backend& backend, MPI_Comm comm = MPI_COMM_WORLD,
                                     double collective_timeout_s = 0.0);

}  // namespace pfc
