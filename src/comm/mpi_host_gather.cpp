#include "comm/mpi_host_gather.h"

#include <climits>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace pfc {

Tensor mpi_all_gather_host(MPI_Comm comm, int world_size, const Tensor& mine) {
  PFC_CHECK(mine.defined() && mine.device() == DeviceKind::cpu && mine.rank() >= 1,
            "all_gather_host: {} must be a host tensor with rows", mine.describe());
  PFC_CHECK(mine.bytes() <= static_cast<std::size_t>(INT_MAX),
            "all_gather_host: {} is larger than one MPI call moves", mine.describe());
  Shape gathered = mine.shape();
  gathered[0] *= world_size;
  Tensor all = Tensor::host(gathered, mine.dtype(), MemoryPurpose::comm);
  const int bytes = static_cast<int>(mine.bytes());
  PFC_CHECK_MPI(MPI_Allgather(mine.raw(), bytes, MPI_BYTE, all.raw(), bytes, MPI_BYTE, comm));
  return all;
}

}  // namespace pfc
