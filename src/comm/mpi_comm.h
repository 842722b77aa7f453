// MpiComm: the Comm interface over MPI on host tensors. It works on a private duplicate of the
// communicator it is given (MPI_COMM_WORLD by default), so its collectives never match other
// traffic, and errors on it come back as codes that PFC_CHECK_MPI turns into pfc::Error.
// Every collective runs non-blocking under a CollectiveWatchdog: one that some rank has not
// joined after collective_timeout_s throws CollectiveTimeout naming the ranks that did not
// arrive, on every rank that waits (comm/collective_watchdog.h).
// Element types: f32, f64, i32, i64, u8 everywhere; f16 only where nothing is added
// (all_gather, broadcast), as raw 2-byte words. The tensors of a plan (the meta backend on
// real ranks) are checked as host tensors are and then not sent: they hold no values; the host
// scalars and host gathers that steer the plan's ranks still travel.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/collective_watchdog.h"
#include "comm/comm.h"

namespace pfc {

class MpiComm final : public Comm {
 public:
  // max_count: the most elements one MPI call moves; larger buffers go in pieces (MPI counts
  // are int). Tests lower it to exercise the piecewise path.
  // collective_timeout_s: 0 waits forever, as MPI's blocking collectives do.
  explicit MpiComm(MPI_Comm base = MPI_COMM_WORLD, std::int64_t max_count = INT_MAX,
                   double collective_timeout_s = 0.0);
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "mpi"; }

  void all_gather(const Tensor& send, Tensor& recv) override;
  void all_reduce(Tensor& x, ReduceOp op) override;
  void reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) override;
  void broadcast(Tensor& x, int root) override;
  void barrier() override;
  double all_reduce_scalar(double value, ReduceOp op) override;
  Tensor all_gather_host(const Tensor& mine) override;

  MPI_Comm handle() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::int64_t max_count_;
  int rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  std::unique_ptr<CollectiveWatchdog> watchdog_;
};

// An MpiComm over MPI_COMM_WORLD (MPI must be initialised).
std::unique_ptr<Comm> make_mpi_comm(double collective_timeout_s);

}  // namespace pfc
