#include "comm/cuda/nccl_comm.h"

#include <fmt/format.h>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_handles.h"
#include "comm/mpi_comm.h"
#include "core/error.h"

namespace pfc {

namespace {

void check_mpi(int status, const char* call, int rank) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(fmt::format("MPI {} failed on rank {}: {}", call, rank, text));
}

struct NodePlacement {
  int local_rank = 0;
  int local_size = 1;
};

NodePlacement node_placement(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  PFC_CHECK(initialized, "NCCL communicator: MPI is not initialised");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "Comm_split_type", rank);
  NodePlacement p;
  MPI_Comm_rank(node, &p.local_rank);
  MPI_Comm_size(node, &p.local_size);
  MPI_Comm_free(&node);
  return p;
}

// One GPU per node-local rank. A rank that sees a single GPU while its node holds several
// ranks was given its own by the launcher (Slurm's --gpus-per-task sets CUDA_VISIBLE_DEVICES
// per task); should two ranks still share one, ncclCommInitRank reports the duplicate.
int device_for(const NodePlacement& p) {
  const int devices = cuda_visible_device_count();
  if (devices == 1) return 0;
  PFC_CHECK(p.local_size <= devices,
            "{} ranks share this node but {} GPU(s) are visible: NCCL needs one GPU per rank",
            p.local_size, devices);
  return p.local_rank;
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return ncclFloat16;
    case DType::f32:
      return ncclFloat32;
    case DType::f64:
      return ncclFloat64;
    case DType::i32:
      return ncclInt32;
    case DType::i64:
      return ncclInt64;
    case DType::u8:
      return ncclUint8;
    case DType::bf16:
      return ncclBfloat16;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::max ? ncclMax : ncclSum; }

class NcclComm final : public Comm {
 public:
  NcclComm(CudaBackend& backend, MPI_Comm comm, double collective_timeout_s)
      : backend_(backend), mpi_(comm), host_(comm, INT_MAX, collective_timeout_s) {
    MPI_Comm_rank(mpi_, &rank_);
    MPI_Comm_size(mpi_, &world_);
    const NodePlacement placement = node_placement(mpi_);
    local_rank_ = placement.local_rank;
    const int wanted = device_for(placement);
    // Agreed before the first broadcast: a rank that stopped alone would leave the others
    // waiting in MPI_Bcast or ncclCommInitRank for good.
    const bool right_device = backend_.device_ordinal() == wanted;
    int all_right = right_device ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &all_right, 1, MPI_INT, MPI_MIN, mpi_),
              "Allreduce(device check)", rank_);
    PFC_CHECK(right_device,
              "NCCL communicator on rank {}: the backend drives GPU {}, but this rank is local "
              "rank {} of its node and must drive GPU {} (see nccl_device_ordinal)",
              rank_, backend_.device_ordinal(), placement.local_rank, wanted);
    PFC_CHECK(all_right != 0,
              "NCCL communicator on rank {}: another rank drives the wrong GPU (its own message "
              "names it); all ranks stop",
              rank_);

    ncclUniqueId id{};
    if (rank_ == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi_), "Bcast(ncclUniqueId)", rank_);
    PFC_CHECK_CUDA(cudaSetDevice(backend_.device_ordinal()));
    // The stream and events first: nothing may throw once the communicator exists, as a
    // constructor that throws runs no destructor to release it.
    stream_ = cuda::make_stream();
    ready_ = cuda::make_ordering_event();
    done_ = cuda::make_ordering_event();
    check(ncclCommInitRank(&nccl_, world_, id, rank_), "ncclCommInitRank");
  }

  ~NcclComm() override {
    if (nccl_) {
      static_cast<void>(cudaStreamSynchronize(stream_));
      static_cast<void>(ncclCommDestroy(nccl_));
    }
  }

  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "nccl"; }

  void all_gather(const Tensor& send, Tensor& recv) override {
    require(send, "all_gather", "send");
    require(recv, "all_gather", "recv");
    check_dtype(recv, send.dtype(), "all_gather", "recv");
    Shape expected = send.shape();
    PFC_CHECK(!expected.empty(), "all_gather: send {} needs a leading dimension", send.describe());
    expected[0] *= world_;
    check_shape(recv, expected, "all_gather", "recv");
    run("ncclAllGather", [&] {
      return ncclAllGather(send.raw(), recv.raw(), static_cast<std::size_t>(send.numel()),
                           nccl_type(send.dtype()), nccl_, stream_);
    });
  }

  void all_reduce(Tensor& x, ReduceOp op) override {
    require(x, "all_reduce", "x");
    run("ncclAllReduce", [&] {
      return ncclAllReduce(x.raw(), x.raw(), static_cast<std::size_t>(x.numel()),
                           nccl_type(x.dtype()), nccl_op(op), nccl_, stream_);
    });
  }

  void reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) override {
    require(send, "reduce_scatter", "send");
    require(recv, "reduce_scatter", "recv");
    check_dtype(recv, send.dtype(), "reduce_scatter", "recv");
    Shape expected = recv.shape();
    PFC_CHECK(!expected.empty(), "reduce_scatter: recv {} needs a leading dimension",
              recv.describe());
    expected[0] *= world_;
    check_shape(send, expected, "reduce_scatter", "send");
    run("ncclReduceScatter", [&] {
      return ncclReduceScatter(send.raw(), recv.raw(), static_cast<std::size_t>(recv.numel()),
                               nccl_type(send.dtype()), nccl_op(op), nccl_, stream_);
    });
  }

  void broadcast(Tensor& x, int root) override {
    require(x, "broadcast", "x");
    PFC_CHECK(root >= 0 && root < world_, "broadcast: root {} outside [0, {})", root, world_);
    run("ncclBroadcast", [&] {
      return ncclBroadcast(x.raw(), x.raw(), static_cast<std::size_t>(x.numel()),
                           nccl_type(x.dtype()), root, nccl_, stream_);
    });
  }

  // Every rank's queued device work is done, then the ranks meet.
  void barrier() override {
    backend_.synchronize();
    PFC_CHECK_CUDA(cudaStreamSynchronize(stream_));
    check_async("barrier");
    host_.barrier();
  }

  Tensor all_gather_host(const Tensor& mine) override { return host_.all_gather_host(mine); }

  double all_reduce_scalar(double value, ReduceOp op) override {
    return host_.all_reduce_scalar(value, op);
  }

 private:
  void require(const Tensor& t, const char* op, const char* operand) const {
    PFC_CHECK(t.defined() && t.device() == DeviceKind::cuda,
              "{}: {} must be a device tensor for NCCL (rank {})", op, operand, rank_);
  }

  void check(ncclResult_t status, const char* call) const {
    if (status == ncclSuccess) return;
    const char* detail = nccl_ ? ncclGetLastError(nccl_) : nullptr;
    throw Error(fmt::format("NCCL {} failed on rank {} of {}: {}{}{}", call, rank_, world_,
                            ncclGetErrorString(status), detail && *detail ? " — " : "",
                            detail ? detail : ""));
  }

  // Errors that surfaced asynchronously (a peer died, a network failure).
  void check_async(const char* call) const {
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(nccl_, &async), "ncclCommGetAsyncError");
    check(async, call);
  }

  // Queues one collective on the NCCL stream between two events: it waits for the
  // backend's queued work, and the backend's later work waits for it.
  template <class Call>
  void run(const char* call, Call&& collective) {
    PFC_CHECK_CUDA(cudaEventRecord(ready_, backend_.stream()));
    PFC_CHECK_CUDA(cudaStreamWaitEvent(stream_, ready_, 0));
    check(collective(), call);
    PFC_CHECK_CUDA(cudaEventRecord(done_, stream_));
    PFC_CHECK_CUDA(cudaStreamWaitEvent(backend_.stream(), done_, 0));
  }

  CudaBackend& backend_;
  MPI_Comm mpi_;
  MpiComm host_;  // host scalars and the barrier, under the collective watchdog
  int rank_ = 0, world_ = 1, local_rank_ = 0;
  ncclComm_t nccl_ = nullptr;
  cuda::Stream stream_;
  cuda::Event ready_;
  cuda::Event done_;
};

}  // namespace

int nccl_device_ordinal(MPI_Comm comm) { return device_for(node_placement(comm)); }

std::unique_ptr<Comm> make_nccl_comm(Backend& backend, MPI_Comm comm,
                                     double collective_timeout_s) {
  auto* cuda_backend = dynamic_cast<CudaBackend*>(&backend);
  PFC_CHECK(cuda_backend != nullptr, "the NCCL communicator needs the CUDA backend, not {}",
            backend.name());
  return std::make_unique<NcclComm>(*cuda_backend, comm, collective_timeout_s);
}

}  // namespace pfc
