// Collectives between the ranks of one run. MpiComm moves host buffers, NcclComm device
// buffers, EmulatedComm plays one rank of a larger world on its own. The algorithm code
// (PartialFC, trainer) sees only this interface.
#pragma once

#include <memory>
#include <string>

#include "core/tensor.h"

namespace pfc {

enum class ReduceOp { sum, max };

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Rank among the processes on this node (picks the GPU).
  virtual int local_rank() const = 0;
  virtual std::string name() const = 0;

  // recv [world * n, ...] = the ranks' send [n, ...] in rank order.
  virtual void all_gather(const Tensor& send, Tensor& recv) = 0;
  virtual void all_reduce(Tensor& x, ReduceOp op) = 0;
  // send [world * n, ...]; recv [n, ...] = op over ranks of block `rank` of send.
  virtual void reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) = 0;
  virtual void broadcast(Tensor& x, int root) = 0;
  virtual void barrier() = 0;

  // Host scalars, for decisions every rank must take alike (overflow skips, stop signals).
  virtual double all_reduce_scalar(double value, ReduceOp op) = 0;
  // Host data the ranks share (labels, per-rank figures, names): every rank's host tensor
  // mine [n, ...] (one shape on all ranks) in rank order, [world * n, ...] on every rank's host.
  // It never passes through the backend, so it carries values whatever the backend's tensors
  // are (a plan's meta tensors hold none).
  virtual Tensor all_gather_host(const Tensor& mine) = 0;

  // Seconds of communication estimated so far by a comm that models its collectives instead
  // of running them (EmulatedComm); 0 where they really run, their time being inside the
  // measured step time. A virtual here rather than a cast in the trainer: the algorithm
  // keeps seeing only this interface.
  virtual double modelled_seconds() const { return 0.0; }
};

}  // namespace pfc
