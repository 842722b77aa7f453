// What a ring collective costs one rank of W (Thakur, Rabenseifner & Gropp, "Optimization of
// collective communication operations in MPICH", IJHPCA 2005; NCCL uses rings within a node):
// `hops` steps of link latency, and `bus_bytes` through the rank's link. With S the payload:
//   all_gather      S = recv (all blocks)   hops W - 1          bus_bytes (W - 1) / W * S
//   reduce_scatter  S = send (all blocks)   hops W - 1          bus_bytes (W - 1) / W * S
//   all_reduce      S = the buffer          hops 2 (W - 1)      bus_bytes 2 (W - 1) / W * S
//   broadcast       S = the buffer          hops W - 1          bus_bytes S (W > 1)
//   barrier         no payload              hops ceil(log2 W)   (dissemination)
// The fractions are the "bus bandwidth" factors of NVIDIA's nccl-tests (doc/PERFORMANCE.md),
// so bus_bytes / busbw is the time at the bandwidth nccl-tests prints. W = 1 costs nothing.
// EmulatedComm times its modelled collectives with it; CountingComm sums it for a plan.
#pragma once

#include <string_view>

namespace pfc {

enum class Collective { all_gather, reduce_scatter, all_reduce, broadcast, barrier };

std::string_view collective_name(Collective kind);

struct RingCost {
  double hops = 0;
  double bus_bytes = 0;
};

RingCost ring_cost(Collective kind, int world_size, double payload_bytes);

}  // namespace pfc
