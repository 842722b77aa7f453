// EmulatedComm: one process plays rank `rank` of a world of `world_size` ranks, for memory and
// compute studies of a job larger than the machine (DESIGN.md, `emulate_world_size`). Every
// buffer has the size it has on that rank of the real job (a gathered batch holds world_size
// blocks, PartialFC's shard is ShardLayout's for the modelled world), so memory and compute are
// those of one GPU of the real job; the peers' data is synthesised and the time the collectives
// would take is estimated by a model instead of being spent.
//
// What the collectives return. The peers are taken to hold what this rank holds: the world is
// world_size copies of this rank. That keeps every value finite and of the magnitude a real
// step produces (embeddings of the same kind of samples, labels that are valid class ids), and
// the reductions stay consistent with one another:
//   all_gather      every block of recv is a copy of send (send may already be block `rank` of
//                   recv: gather in place);
//   all_reduce      sum: world_size * x, max: x — what world_size identical contributions
//                   reduce to. The trainer steps with the summed backbone gradient (each
//                   rank's is its share of the global batch's), world_size * x: what a real
//                   world of such ranks sums to; and PartialFC's softmax sum, loss sum and
//                   batch-size check see a world whose ranks agree;
//   reduce_scatter  recv = block `rank` of send reduced over world_size identical
//                   contributions (sum: world_size * block, max: block);
//   broadcast       no-op (the root's tensor is taken to equal ours);
//   barrier         waits for the backend's queued work (as NcclComm does), nothing else;
//   all_reduce_scalar  as all_reduce;
//   all_gather_host    world_size copies of this rank's host tensor, made on the host.
// Values never leave the backend that holds them: copies and scaling go through Backend
// primitives, so tensors may be device buffers when the backend is CUDA.
//
// The time model: comm/ring_cost.h's ring collectives, each taking hops * alpha + bus_bytes / B.
// Constants come from the config: emulate_bandwidth_gbps (B, GB/s = 1e9 bytes/s; default 150,
// one V100 SXM2's NVLink 2 bandwidth each way, six links of 25 GB/s — the seed's machine; an
// H100/H200 SXM node has 450 each way) and emulate_latency_us (alpha per hop; default 10 us,
// an upper end for NVLink hops). W = 1 costs nothing. Compute and communication are taken not to
// overlap: the modelled seconds are reported beside the measured step time, not inside it.
#pragma once

#include <cstddef>
#include <string>

#include "backend/backend.h"
#include "comm/comm.h"
#include "comm/ring_cost.h"

namespace pfc {

class EmulatedComm final : public Comm {
 public:
  // world_size >= 1, 0 <= rank < world_size, bandwidth_gbps > 0, latency_us >= 0 (pfc::Error
  // otherwise). `backend` holds the tensors the collectives get and must outlive the comm.
  EmulatedComm(int world_size, int rank, double bandwidth_gbps, double latency_us,
               Backend& backend);

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  // The one process of an emulated run drives the first GPU it sees.
  int local_rank() const override { return 0; }
  std::string name() const override { return "emulated"; }

  void all_gather(const Tensor& send, Tensor& recv) override;
  void all_reduce(Tensor& x, ReduceOp op) override;
  void reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) override;
  void broadcast(Tensor& x, int root) override;
  void barrier() override;
  double all_reduce_scalar(double value, ReduceOp op) override;
  Tensor all_gather_host(const Tensor& mine) override;

  // The modelled time of every collective so far, in seconds.
  double modelled_seconds() const override { return modelled_seconds_; }

 private:
  // Adds one ring collective of `payload_bytes`.
  void add_time(Collective kind, std::size_t payload_bytes);
  // x *= world_size: the sum of world_size identical contributions.
  void multiply_by_world(Tensor& x);

  int world_size_;
  int rank_;
  double bytes_per_second_;
  double latency_s_;
  Backend& backend_;
  double modelled_seconds_ = 0.0;
};

}  // namespace pfc
