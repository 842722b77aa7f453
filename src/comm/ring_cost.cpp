#include "comm/ring_cost.h"

#include <cmath>

namespace pfc {

std::string_view collective_name(Collective kind) {
  switch (kind) {
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_reduce: return "all_reduce";
    case Collective::broadcast: return "broadcast";
    case Collective::barrier: return "barrier";
  }
  return "?";
}

RingCost ring_cost(Collective kind, int world_size, double payload_bytes) {
  const double w = world_size;
  if (world_size <= 1) return {};
  switch (kind) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
      return {w - 1, (w - 1) / w * payload_bytes};
    case Collective::all_reduce:
      return {2 * (w - 1), 2 * (w - 1) / w * payload_bytes};
    case Collective::broadcast:
      return {w - 1, payload_bytes};
    case Collective::barrier:
      return {std::ceil(std::log2(w)), 0};
  }
  return {};
}

}  // namespace pfc
