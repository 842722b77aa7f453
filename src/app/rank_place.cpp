#include "app/rank_place.h"

#include <mpi.h>

#include "comm/mpi_comm.h"
#ifdef PFC_HAVE_CUDA
#include "comm/cuda/nccl_comm.h"
#endif

namespace pfc {

RankPlace make_rank_place(BackendKind kind, double collective_timeout_s) {
  RankPlace place;
#ifdef PFC_HAVE_CUDA
  if (kind == BackendKind::cuda) {
    place.backend = make_backend(kind, nccl_device_ordinal(MPI_COMM_WORLD));
    place.comm = make_nccl_comm(*place.backend, MPI_COMM_WORLD, collective_timeout_s);
    return place;
  }
#endif
  place.comm = make_mpi_comm(collective_timeout_s);
  place.backend = make_backend(kind, place.comm->local_rank());
  return place;
}

}  // namespace pfc
