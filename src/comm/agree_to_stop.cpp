#include "comm/agree_to_stop.h"

#include "core/stop_signals.h"

namespace pfc {

bool agree_to_stop(Comm& comm) {
  return comm.all_reduce_scalar(stop_requested() ? 1.0 : 0.0, ReduceOp::max) > 0.0;
}

}  // namespace pfc
