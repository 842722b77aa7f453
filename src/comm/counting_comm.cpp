#include "comm/counting_comm.h"

namespace pfc {

CollectiveTally collectives_since(const CollectiveTally& now, const CollectiveTally& earlier) {
  CollectiveTally delta;
  for (const auto& [kind, work] : now) {
    CollectiveWork d = work;
    if (const auto it = earlier.find(kind); it != earlier.end()) {
      d.calls -= it->second.calls;
      d.bytes -= it->second.bytes;
      d.hops -= it->second.hops;
      d.bus_bytes -= it->second.bus_bytes;
    }
    if (d.calls > 0) delta.emplace(kind, d);
  }
  return delta;
}

CollectiveWork total(const CollectiveTally& tally) {
  CollectiveWork sum;
  for (const auto& [kind, work] : tally) {
    sum.calls += work.calls;
    sum.bytes += work.bytes;
    sum.hops += work.hops;
    sum.bus_bytes += work.bus_bytes;
  }
  return sum;
}

void CountingComm::count(Collective kind, std::size_t payload_bytes) {
  const auto payload = static_cast<double>(payload_bytes);
  const RingCost cost = ring_cost(kind, inner_.world_size(), payload);
  CollectiveWork& w = tally_[kind];
  w.calls += 1;
  w.bytes += payload;
  w.hops += cost.hops;
  w.bus_bytes += cost.bus_bytes;
}

void CountingComm::all_gather(const Tensor& send, Tensor& recv) {
  inner_.all_gather(send, recv);
  count(Collective::all_gather, recv.bytes());
}

void CountingComm::all_reduce(Tensor& x, ReduceOp op) {
  inner_.all_reduce(x, op);
  count(Collective::all_reduce, x.bytes());
}

void CountingComm::reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) {
  inner_.reduce_scatter(send, recv, op);
  count(Collective::reduce_scatter, send.bytes());
}

void CountingComm::broadcast(Tensor& x, int root) {
  inner_.broadcast(x, root);
  count(Collective::broadcast, x.bytes());
}

void CountingComm::barrier() {
  inner_.barrier();
  count(Collective::barrier, 0);
}

double CountingComm::all_reduce_scalar(double value, ReduceOp op) {
  const double result = inner_.all_reduce_scalar(value, op);
  count(Collective::all_reduce, sizeof value);
  return result;
}

Tensor CountingComm::all_gather_host(const Tensor& mine) {
  Tensor all = inner_.all_gather_host(mine);
  count(Collective::all_gather, all.bytes());
  return all;
}

}  // namespace pfc
