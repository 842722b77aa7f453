#include "comm/mpi_comm.h"

#include <algorithm>
#include <cstring>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace pfc {
namespace {

// The MPI type of one element. f16 and bf16 travel as raw 16-bit words: MPI has no such types,
// and moving bytes is all that gathers and broadcasts do.
MPI_Datatype element_type(DType t, const char* op, bool reducing) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      PFC_CHECK(!reducing, "MpiComm::{}: {} cannot be reduced on the host (MPI has no 16-bit "
                "float type); reduce f32", op, dtype_name(t));
      return MPI_UINT16_T;
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::u8: return MPI_UINT8_T;
  }
  throw Error(fmt::format("MpiComm::{}: unknown element type", op));
}

MPI_Op reduce_op(ReduceOp op) { return op == ReduceOp::sum ? MPI_SUM : MPI_MAX; }

// Host tensors, or a plan's meta tensors (checked alike, then not sent).
void check_host(const Tensor& t, const char* op, const char* operand) {
  PFC_CHECK(t.defined(), "MpiComm::{}: {} is an undefined tensor", op, operand);
  PFC_CHECK(t.device() == DeviceKind::cpu || t.device() == DeviceKind::meta,
            "MpiComm::{}: {} {} is not a host tensor (device buffers go through NcclComm)", op,
            operand, t.describe());
}

// Whether a collective of these (checked) operands moves values: not for meta tensors.
bool carries_values(const Tensor& a, const Tensor& b, const char* op) {
  PFC_CHECK(a.device() == b.device(), "MpiComm::{}: {} and {} tensors cannot be mixed", op,
            device_kind_place(a.device()), device_kind_place(b.device()));
  return a.device() == DeviceKind::cpu;
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

// Calls f(offset, count) over [0, n) in pieces of at most max_count elements.
template <class F>
void in_pieces(std::int64_t n, std::int64_t max_count, F&& f) {
  for (std::int64_t offset = 0; offset < n; offset += max_count)
    f(offset, static_cast<int>(std::min(max_count, n - offset)));
}

}  // namespace

MpiComm::MpiComm(MPI_Comm base, std::int64_t max_count, double collective_timeout_s)
    : max_count_(max_count) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  PFC_CHECK(initialized, "MpiComm needs MPI to be initialised (MPI_Init) first");
  PFC_CHECK(max_count >= 1 && max_count <= INT_MAX, "MpiComm: max_count {} is outside [1, {}]",
            max_count, INT_MAX);
  PFC_CHECK_MPI(MPI_Comm_dup(base, &comm_));
  try {
    PFC_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    PFC_CHECK_MPI(MPI_Comm_rank(comm_, &rank_));
    PFC_CHECK_MPI(MPI_Comm_size(comm_, &world_size_));
    // The rank among the processes that share this node's memory picks the GPU; MPI knows
    // it under any launcher (mpiexec, srun --mpi=pmix), so no launcher variables are read.
    MPI_Comm node = MPI_COMM_NULL;
    PFC_CHECK_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    const int rc = MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
    PFC_CHECK_MPI(rc);
    watchdog_ = std::make_unique<CollectiveWatchdog>(comm_, collective_timeout_s);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}

MpiComm::~MpiComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  const bool abandoned = watchdog_ && watchdog_->abandoned();
  watchdog_.reset();
  if (!finalized && !abandoned && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiComm::all_gather(const Tensor& send, Tensor& recv) {
  const char* op = "all_gather";
  check_host(send, op, "send");
  check_host(recv, op, "recv");
  check_dtype(recv, send.dtype(), op, "recv");
  const std::int64_t n = send.numel();
  PFC_CHECK(recv.numel() == world_size_ * n,
            "MpiComm::all_gather: recv {} must hold {} ranks x send {}", recv.describe(),
            world_size_, send.describe());
  if (send.rank() >= 1 && recv.rank() == send.rank()) {
    Shape expected = send.shape();
    expected[0] *= world_size_;
    check_shape(recv, expected, op, "recv");
  }
  if (n == 0) return;
  const MPI_Datatype type = element_type(send.dtype(), op, false);
  const std::size_t block = send.bytes();
  char* out = static_cast<char*>(recv.raw());
  char* own = out + static_cast<std::size_t>(rank_) * block;
  // send may already be this rank's block of recv (gather in place); any other overlap
  // would be overwritten while being read.
  const bool in_place = send.raw() == own;
  PFC_CHECK(in_place || !overlap(send.raw(), block, out, recv.bytes()),
            "MpiComm::all_gather: send overlaps recv other than as this rank's block");
  if (!carries_values(send, recv, op)) return;
  if (n <= max_count_) {
    MPI_Request request;
    PFC_CHECK_MPI(MPI_Iallgather(in_place ? MPI_IN_PLACE : send.raw(), static_cast<int>(n), type,
                                 out, static_cast<int>(n), type, comm_, &request));
    watchdog_->wait(request, op);
    return;
  }
  if (!in_place) std::memcpy(own, send.raw(), block);
  const std::size_t esize = dtype_size(send.dtype());
  for (int root = 0; root < world_size_; ++root) {
    char* base = out + static_cast<std::size_t>(root) * block;
    in_pieces(n, max_count_, [&](std::int64_t offset, int count) {
      MPI_Request request;
      PFC_CHECK_MPI(MPI_Ibcast(base + static_cast<std::size_t>(offset) * esize, count, type,
                               root, comm_, &request));
      watchdog_->wait(request, op);
    });
  }
}

void MpiComm::all_reduce(Tensor& x, ReduceOp op) {
  check_host(x, "all_reduce", "x");
  const MPI_Datatype type = element_type(x.dtype(), "all_reduce", true);
  if (!carries_values(x, x, "all_reduce")) return;
  const std::size_t esize = dtype_size(x.dtype());
  char* p = static_cast<char*>(x.raw());
  in_pieces(x.numel(), max_count_, [&](std::int64_t offset, int count) {
    MPI_Request request;
    PFC_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, p + static_cast<std::size_t>(offset) * esize,
                                 count, type, reduce_op(op), comm_, &request));
    watchdog_->wait(request, "all_reduce");
  });
}

void MpiComm::reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) {
  const char* name = "reduce_scatter";
  check_host(send, name, "send");
  check_host(recv, name, "recv");
  check_dtype(recv, send.dtype(), name, "recv");
  const std::int64_t n = recv.numel();
  PFC_CHECK(send.numel() == world_size_ * n,
            "MpiComm::reduce_scatter: send {} must hold {} ranks x recv {}", send.describe(),
            world_size_, recv.describe());
  PFC_CHECK(!overlap(send.raw(), send.bytes(), recv.raw(), recv.bytes()),
            "MpiComm::reduce_scatter: send and recv overlap");
  const MPI_Datatype type = element_type(send.dtype(), name, true);
  if (n == 0 || !carries_values(send, recv, name)) return;
  if (n <= max_count_) {
    MPI_Request request;
    PFC_CHECK_MPI(MPI_Ireduce_scatter_block(send.raw(), recv.raw(), static_cast<int>(n), type,
                                            reduce_op(op), comm_, &request));
    watchdog_->wait(request, name);
    return;
  }
  // Too large for one call: reduce each rank's block onto it, piece by piece.
  const std::size_t esize = dtype_size(send.dtype());
  const auto* in = static_cast<const char*>(send.raw());
  auto* out = static_cast<char*>(recv.raw());
  for (int root = 0; root < world_size_; ++root) {
    const char* block = in + static_cast<std::size_t>(root) * recv.bytes();
    in_pieces(n, max_count_, [&](std::int64_t offset, int count) {
      const std::size_t at = static_cast<std::size_t>(offset) * esize;
      MPI_Request request;
      PFC_CHECK_MPI(MPI_Ireduce(block + at, root == rank_ ? out + at : nullptr, count, type,
                                reduce_op(op), root, comm_, &request));
      watchdog_->wait(request, name);
    });
  }
}

void MpiComm::broadcast(Tensor& x, int root) {
  check_host(x, "broadcast", "x");
  PFC_CHECK(root >= 0 && root < world_size_, "MpiComm::broadcast: root {} is outside [0, {})",
            root, world_size_);
  const MPI_Datatype type = element_type(x.dtype(), "broadcast", false);
  if (!carries_values(x, x, "broadcast")) return;
  const std::size_t esize = dtype_size(x.dtype());
  char* p = static_cast<char*>(x.raw());
  in_pieces(x.numel(), max_count_, [&](std::int64_t offset, int count) {
    MPI_Request request;
    PFC_CHECK_MPI(MPI_Ibcast(p + static_cast<std::size_t>(offset) * esize, count, type, root,
                             comm_, &request));
    watchdog_->wait(request, "broadcast");
  });
}

void MpiComm::barrier() {
  MPI_Request request;
  PFC_CHECK_MPI(MPI_Ibarrier(comm_, &request));
  watchdog_->wait(request, "barrier");
}

double MpiComm::all_reduce_scalar(double value, ReduceOp op) {
  double result = 0.0;
  MPI_Request request;
  PFC_CHECK_MPI(MPI_Iallreduce(&value, &result, 1, MPI_DOUBLE, reduce_op(op), comm_, &request));
  watchdog_->wait(request, "all_reduce_scalar");
  return result;
}

Tensor MpiComm::all_gather_host(const Tensor& mine) {
  PFC_CHECK(mine.defined() && mine.device() == DeviceKind::cpu && mine.rank() >= 1,
            "all_gather_host: {} must be a host tensor with rows", mine.describe());
  PFC_CHECK(mine.bytes() <= static_cast<std::size_t>(INT_MAX),
            "all_gather_host: {} is larger than one MPI call moves", mine.describe());
  Shape gathered = mine.shape();
  gathered[0] *= world_size_;
  Tensor all = Tensor::host(gathered, mine.dtype(), MemoryPurpose::comm);
  const int bytes = static_cast<int>(mine.bytes());
  MPI_Request request;
  PFC_CHECK_MPI(MPI_Iallgather(mine.raw(), bytes, MPI_BYTE, all.raw(), bytes, MPI_BYTE, comm_,
                               &request));
  watchdog_->wait(request, "all_gather_host");
  return all;
}

std::unique_ptr<Comm> make_mpi_comm(double collective_timeout_s) {
  return std::make_unique<MpiComm>(MPI_COMM_WORLD, INT_MAX, collective_timeout_s);
}

}  // namespace pfc
