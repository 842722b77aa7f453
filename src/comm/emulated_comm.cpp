#include "comm/emulated_comm.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace pfc {

namespace {

void check_defined(const Tensor& t, const char* op, const char* operand) {
  PFC_CHECK(t.defined(), "EmulatedComm::{}: {} is an undefined tensor", op, operand);
}

// Byte ranges compared as addresses only (they may be device pointers): never dereferenced.
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

template <class T>
void multiply_host(Tensor& x, std::int64_t factor) {
  T* p = x.data<T>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = static_cast<T>(p[i] * factor);
}

}  // namespace

EmulatedComm::EmulatedComm(int world_size, int rank, double bandwidth_gbps, double latency_us,
                           Backend& backend)
    : world_size_(world_size),
      rank_(rank),
      bytes_per_second_(bandwidth_gbps * 1e9),
      latency_s_(latency_us * 1e-6),
      backend_(backend) {
  PFC_CHECK(world_size >= 1, "EmulatedComm: world size {} must be at least 1", world_size);
  PFC_CHECK(rank >= 0 && rank < world_size, "EmulatedComm: rank {} is outside a world of {}",
            rank, world_size);
  PFC_CHECK(std::isfinite(bandwidth_gbps) && bandwidth_gbps > 0,
            "EmulatedComm: bandwidth {} GB/s must be positive", bandwidth_gbps);
  PFC_CHECK(std::isfinite(latency_us) && latency_us >= 0,
            "EmulatedComm: latency {} us must be zero or positive", latency_us);
}

void EmulatedComm::add_time(Collective kind, std::size_t payload_bytes) {
  const RingCost cost = ring_cost(kind, world_size_, static_cast<double>(payload_bytes));
  modelled_seconds_ += cost.hops * latency_s_ + cost.bus_bytes / bytes_per_second_;
}

void EmulatedComm::multiply_by_world(Tensor& x) {
  if (world_size_ == 1 || x.numel() == 0) return;
  const DType t = x.dtype();
  if (t == DType::f16 || t == DType::f32 || t == DType::f64) {
    backend_.scale(x, static_cast<double>(world_size_));
    return;
  }
  // Integer sums are rare (counts); the Backend scales floats only, so they go by the host.
  Tensor host = backend_.to_host(x);
  if (t == DType::i32)
    multiply_host<std::int32_t>(host, world_size_);
  else if (t == DType::i64)
    multiply_host<std::int64_t>(host, world_size_);
  else
    multiply_host<std::uint8_t>(host, world_size_);
  backend_.copy(host, x);
}

void EmulatedComm::all_gather(const Tensor& send, Tensor& recv) {
  const char* op = "all_gather";
  check_defined(send, op, "send");
  check_defined(recv, op, "recv");
  check_dtype(recv, send.dtype(), op, "recv");
  const std::int64_t n = send.numel();
  PFC_CHECK(recv.numel() == world_size_ * n,
            "EmulatedComm::all_gather: recv {} must hold {} ranks x send {}", recv.describe(),
            world_size_, send.describe());
  if (send.rank() >= 1 && recv.rank() == send.rank()) {
    Shape expected = send.shape();
    expected[0] *= world_size_;
    check_shape(recv, expected, op, "recv");
  }
  add_time(Collective::all_gather, recv.bytes());
  if (n == 0) return;
  const Tensor blocks = recv.reshape({world_size_, n});
  const Tensor own = blocks.rows(rank_, rank_ + 1);
  const bool in_place = send.raw() == own.raw();
  PFC_CHECK(in_place || !overlap(send.raw(), send.bytes(), recv.raw(), recv.bytes()),
            "EmulatedComm::all_gather: send overlaps recv other than as this rank's block");
  for (int r = 0; r < world_size_; ++r) {
    if (in_place && r == rank_) continue;
    Tensor block = blocks.rows(r, r + 1);
    backend_.copy(send, block);
  }
}

void EmulatedComm::all_reduce(Tensor& x, ReduceOp op) {
  check_defined(x, "all_reduce", "x");
  add_time(Collective::all_reduce, x.bytes());
  if (op == ReduceOp::sum) multiply_by_world(x);
}

void EmulatedComm::reduce_scatter(const Tensor& send, Tensor& recv, ReduceOp op) {
  const char* name = "reduce_scatter";
  check_defined(send, name, "send");
  check_defined(recv, name, "recv");
  check_dtype(recv, send.dtype(), name, "recv");
  const std::int64_t n = recv.numel();
  PFC_CHECK(send.numel() == world_size_ * n,
            "EmulatedComm::reduce_scatter: send {} must hold {} ranks x recv {}", send.describe(),
            world_size_, recv.describe());
  PFC_CHECK(!overlap(send.raw(), send.bytes(), recv.raw(), recv.bytes()),
            "EmulatedComm::reduce_scatter: send and recv overlap");
  add_time(Collective::reduce_scatter, send.bytes());
  if (n == 0) return;
  const Tensor own = send.reshape({world_size_, n}).rows(rank_, rank_ + 1);
  backend_.copy(own, recv);
  if (op == ReduceOp::sum) multiply_by_world(recv);
}

void EmulatedComm::broadcast(Tensor& x, int root) {
  check_defined(x, "broadcast", "x");
  PFC_CHECK(root >= 0 && root < world_size_, "EmulatedComm::broadcast: root {} is outside [0, {})",
            root, world_size_);
  add_time(Collective::broadcast, x.bytes());
}

void EmulatedComm::barrier() {
  backend_.synchronize();
  add_time(Collective::barrier, 0);
}

Tensor EmulatedComm::all_gather_host(const Tensor& mine) {
  PFC_CHECK(mine.defined() && mine.device() == DeviceKind::cpu && mine.rank() >= 1,
            "EmulatedComm::all_gather_host: {} must be a host tensor with rows", mine.describe());
  Shape gathered = mine.shape();
  gathered[0] *= world_size_;
  Tensor all = Tensor::host(gathered, mine.dtype(), MemoryPurpose::comm);
  for (int r = 0; r < world_size_; ++r)
    if (mine.bytes() > 0)
      std::memcpy(static_cast<char*>(all.raw()) + r * mine.bytes(), mine.raw(), mine.bytes());
  add_time(Collective::all_gather, all.bytes());
  return all;
}

double EmulatedComm::all_reduce_scalar(double value, ReduceOp op) {
  add_time(Collective::all_reduce, sizeof value);
  return op == ReduceOp::sum ? world_size_ * value : value;
}

}  // namespace pfc
