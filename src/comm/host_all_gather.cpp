#include "comm/host_all_gather.h"

namespace pfc {

Tensor all_gather_host(Comm& comm, Backend& backend, const Tensor& mine) {
  PFC_CHECK(mine.rank() >= 1, "all_gather_host: {} has no rows", mine.describe());
  Shape gathered = mine.shape();
  gathered[0] *= comm.world_size();
  Tensor send = backend.empty(mine.shape(), mine.dtype(), MemoryPurpose::comm);
  backend.copy(mine, send);
  Tensor recv = backend.empty(gathered, mine.dtype(), MemoryPurpose::comm);
  comm.all_gather(send, recv);
  return backend.to_host(recv);
}

}  // namespace pfc
