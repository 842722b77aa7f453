#include "app/rank_place.h"

#include <mpi.h>

#include "comm/emulated_comm.h"
#include "comm/mpi_check.h"
#include "comm/mpi_comm.h"
#include "core/error.h"
#ifdef PFC_HAVE_CUDA
#include "comm/cuda/nccl_comm.h"
#endif

namespace pfc {

RankPlace make_rank_place(BackendKind kind, double collective_timeout_s,
                          BackendKind plan_for) {
  RankPlace place;
#ifdef PFC_HAVE_CUDA
  if (kind == BackendKind::cuda) {
    place.backend = make_backend(kind, rank_device_ordinal(kind));
    place.comm = make_nccl_comm(*place.backend, MPI_COMM_WORLD, collective_timeout_s);
    return place;
  }
#endif
  place.comm = make_mpi_comm(collective_timeout_s);
  place.backend = make_backend(kind, place.comm->local_rank(), plan_for);
  return place;
}

RankPlace make_run_place(const Config& cfg) {
  const BackendKind kind = parse_backend_kind(cfg.device, "device");
  const BackendKind plan_for = parse_backend_kind(cfg.plan_for, "plan_for");
  if (cfg.emulate_world_size == 0)
    return make_rank_place(kind, cfg.collective_timeout_s, plan_for);
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (processes != 1)
    throw UsageError(fmt::format(
        "emulate_world_size = {} makes one process play one rank of that world, but pfc "
        "was started as {} MPI ranks; start it alone (no mpiexec/srun, or -n 1), or set "
        "emulate_world_size = 0 to use the real ranks",
        cfg.emulate_world_size, processes));
  RankPlace place;
  place.backend = make_backend(kind, 0, plan_for);
  place.comm = std::make_unique<EmulatedComm>(
      static_cast<int>(cfg.emulate_world_size), static_cast<int>(cfg.emulate_rank),
      cfg.emulate_bandwidth_gbps, cfg.emulate_latency_us, *place.backend);
  return place;
}

int rank_device_ordinal(BackendKind kind) {
#ifdef PFC_HAVE_CUDA
  if (kind == BackendKind::cuda) return nccl_device_ordinal(MPI_COMM_WORLD);
#endif
  (void)kind;
  return 0;
}

int ranks_on_this_node() {
  MPI_Comm node = MPI_COMM_NULL;
  int world_rank = 0, size = 1;
  PFC_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  PFC_CHECK_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node));
  const int rc = MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  PFC_CHECK_MPI(rc);
  return size;
}

}  // namespace pfc
