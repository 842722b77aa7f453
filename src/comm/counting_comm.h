// CountingComm: any Comm, with every collective it carries counted (calls, payload bytes, and
// the ring model's hops and bus bytes, comm/ring_cost.h), for a plan's account of a step's
// communication. Everything is passed on to the wrapped comm unchanged.
#pragma once

#include <map>

#include "comm/comm.h"
#include "comm/ring_cost.h"

namespace pfc {

struct CollectiveWork {
  double calls = 0;
  double bytes = 0;      // payload (ring_cost.h's S)
  double hops = 0;
  double bus_bytes = 0;  // through this rank's link
};

using CollectiveTally = std::map<Collective, CollectiveWork>;

// What was added to `now` since `earlier` (a copy of the tally taken then).
CollectiveTally collectives_since(const CollectiveTally& now, const CollectiveTally& earlier);
CollectiveWork total(const CollectiveTally& tally);

class CountingComm final : public Comm {
 public:
  // `inner` must outlive this.
  explicit CountingComm(Comm& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  int local_rank() const override { return inner_.local_rank(); }
  std::string name() const override { return inner_.name(); }

  void all_gather(const Tensor& send, Tensor& recv) override;
  void all_reduce(Tensor& x, ReduceOp op) override;
  void reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) override;
  void broadcast(Tensor& x, int root) override;
  void barrier() override;
  double all_reduce_scalar(double value, ReduceOp op) override;
  Tensor all_gather_host(const Tensor& mine) override;
  double modelled_seconds() const override { return inner_.modelled_seconds(); }

  const CollectiveTally& tally() const { return tally_; }

 private:
  void count(Collective kind, std::size_t payload_bytes);

  Comm& inner_;
  CollectiveTally tally_;
};

}  // namespace pfc
