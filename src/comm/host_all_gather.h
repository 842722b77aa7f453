// All-gather of host data through a communicator that may move only device buffers (NCCL):
// labels, per-rank figures and names travel this way.
#pragma once

#include "backend/backend.h"
#include "comm/comm.h"

namespace pfc {

// mine: a host tensor [n, ...]; returns the host tensor [world * n, ...] holding every rank's
// `mine` in rank order.
Tensor all_gather_host(Comm& comm, Backend& backend, const Tensor& mine);

}  // namespace pfc
