// The all-gather of host data over MPI that MpiComm and NcclComm share (Comm::all_gather_host):
// labels, per-rank figures and names, small enough for one MPI_Allgather of bytes.
#pragma once

#include <mpi.h>

#include "core/tensor.h"

namespace pfc {

// mine: a host tensor [n, ...]; returns [world * n, ...] with every rank's in rank order.
Tensor mpi_all_gather_host(MPI_Comm comm, int world_size, const Tensor& mine);

}  // namespace pfc
