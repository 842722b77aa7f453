// EmulatedComm: what each collective returns (the world as copies of this rank) and the time
// its ring model charges, on the CPU backend.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include "backend/backend.h"
#include "comm/emulated_comm.h"
#include "core/error.h"

namespace pfc {
namespace {

constexpr double kGbps = 2.0;       // bus bandwidth, 1e9 bytes/s
constexpr double kLatencyUs = 5.0;  // per hop
constexpr double kBytesPerSecond = kGbps * 1e9;
constexpr double kLatencyS = kLatencyUs * 1e-6;

// The ring model of emulated_comm.h, written out again.
double ring_seconds(double steps, double fraction, double bytes) {
  return steps * kLatencyS + fraction * bytes / kBytesPerSecond;
}

Tensor iota_f32(const Shape& shape, float first = 1.0f) {
  Tensor t = Tensor::host(shape, DType::f32);
  std::iota(t.data<float>(), t.data<float>() + t.numel(), first);
  return t;
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

class EmulatedCommTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = make_backend(BackendKind::cpu);
  EmulatedComm comm{4, 2, kGbps, kLatencyUs, *backend};
};

TEST_F(EmulatedCommTest, PlaysTheRankItIsGiven) {
  EXPECT_EQ(comm.rank(), 2);
  EXPECT_EQ(comm.world_size(), 4);
  EXPECT_EQ(comm.local_rank(), 0);
  EXPECT_EQ(comm.name(), "emulated");
  EXPECT_EQ(comm.modelled_seconds(), 0.0);
}

TEST_F(EmulatedCommTest, AllGatherCopiesThisRankIntoEveryBlock) {
  const Tensor send = iota_f32({3, 2});
  Tensor recv = Tensor::host({12, 2}, DType::f32);
  comm.all_gather(send, recv);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(values(recv.rows(3 * r, 3 * r + 3)), values(send));
  EXPECT_NEAR(comm.modelled_seconds(), ring_seconds(3, 3.0 / 4, 12 * 2 * 4), 1e-15);
}

TEST_F(EmulatedCommTest, AllGatherInPlace) {
  Tensor recv = Tensor::host({8, 5}, DType::f32);
  backend->fill(recv, -1.0);
  Tensor own = recv.rows(4, 6);  // rank 2's block of two rows
  backend->copy(iota_f32({2, 5}), own);
  comm.all_gather(own, recv);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(values(recv.rows(2 * r, 2 * r + 2)), values(iota_f32({2, 5})));
}

TEST_F(EmulatedCommTest, AllGatherMovesIntegersAndRejectsBadShapes) {
  Tensor send = Tensor::host({3}, DType::i64);
  for (int i = 0; i < 3; ++i) send.data<std::int64_t>()[i] = 10 + i;
  Tensor recv = Tensor::host({12}, DType::i64);
  comm.all_gather(send, recv);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(recv.data<std::int64_t>()[i], 10 + i % 3);

  Tensor too_small = Tensor::host({9}, DType::i64);
  EXPECT_THROW(comm.all_gather(send, too_small), Error);
  Tensor wrong_type = Tensor::host({12}, DType::i32);
  EXPECT_THROW(comm.all_gather(send, wrong_type), Error);
  Tensor wrong_rows = Tensor::host({6, 2}, DType::f32);
  EXPECT_THROW(comm.all_gather(iota_f32({3, 1}), wrong_rows), Error);
  // send inside recv but not as this rank's block
  Tensor big = Tensor::host({8, 1}, DType::f32);
  EXPECT_THROW(comm.all_gather(big.rows(0, 2), big), Error);
}

TEST_F(EmulatedCommTest, AllReduceSumIsWorldTimesXAndMaxIsX) {
  Tensor x = iota_f32({5});
  comm.all_reduce(x, ReduceOp::sum);
  EXPECT_EQ(values(x), (std::vector<float>{4, 8, 12, 16, 20}));
  // The trainer's average of a data-parallel gradient: sum, then divide by the world.
  backend->scale(x, 1.0 / comm.world_size());
  EXPECT_EQ(values(x), values(iota_f32({5})));
  comm.all_reduce(x, ReduceOp::max);
  EXPECT_EQ(values(x), values(iota_f32({5})));
  EXPECT_NEAR(comm.modelled_seconds(), 2 * ring_seconds(6, 6.0 / 4, 5 * 4), 1e-15);
}

TEST_F(EmulatedCommTest, AllReduceSumOfIntegers) {
  Tensor counts = Tensor::host({2}, DType::i64);
  counts.data<std::int64_t>()[0] = 3;
  counts.data<std::int64_t>()[1] = -7;
  comm.all_reduce(counts, ReduceOp::sum);
  EXPECT_EQ(counts.data<std::int64_t>()[0], 12);
  EXPECT_EQ(counts.data<std::int64_t>()[1], -28);
}

TEST_F(EmulatedCommTest, ReduceScatterCombinesThisRanksBlockOverTheWorld) {
  const Tensor send = iota_f32({8, 3});  // four blocks of [2, 3]; rank 2's holds 13..18
  Tensor recv = Tensor::host({2, 3}, DType::f32);
  comm.reduce_scatter(send, recv, ReduceOp::sum);
  EXPECT_EQ(values(recv), (std::vector<float>{52, 56, 60, 64, 68, 72}));
  comm.reduce_scatter(send, recv, ReduceOp::max);
  EXPECT_EQ(values(recv), (std::vector<float>{13, 14, 15, 16, 17, 18}));
  EXPECT_NEAR(comm.modelled_seconds(), 2 * ring_seconds(3, 3.0 / 4, 8 * 3 * 4), 1e-15);

  Tensor wrong = Tensor::host({3, 3}, DType::f32);
  EXPECT_THROW(comm.reduce_scatter(send, wrong, ReduceOp::sum), Error);
  Tensor overlapping = iota_f32({8, 3});
  Tensor inside = overlapping.rows(0, 2);
  EXPECT_THROW(comm.reduce_scatter(overlapping, inside, ReduceOp::sum), Error);
}

TEST_F(EmulatedCommTest, BroadcastKeepsTheTensorAndChargesAPipelinedRing) {
  Tensor x = iota_f32({10});
  comm.broadcast(x, 0);
  EXPECT_EQ(values(x), values(iota_f32({10})));
  EXPECT_NEAR(comm.modelled_seconds(), ring_seconds(3, 1.0, 40), 1e-15);
  EXPECT_THROW(comm.broadcast(x, 4), Error);
  EXPECT_THROW(comm.broadcast(x, -1), Error);
}

TEST_F(EmulatedCommTest, BarrierAndScalars) {
  comm.barrier();
  EXPECT_NEAR(comm.modelled_seconds(), 2 * kLatencyS, 1e-15);  // ceil(log2 4) hops
  EXPECT_DOUBLE_EQ(comm.all_reduce_scalar(2.5, ReduceOp::sum), 10.0);
  EXPECT_DOUBLE_EQ(comm.all_reduce_scalar(2.5, ReduceOp::max), 2.5);
  EXPECT_NEAR(comm.modelled_seconds(), 2 * kLatencyS + 2 * ring_seconds(6, 6.0 / 4, 8), 1e-15);
}

TEST_F(EmulatedCommTest, TheRunningTotalIsSeenThroughTheInterface) {
  Comm& base = comm;
  Tensor x = iota_f32({256});
  base.all_reduce(x, ReduceOp::sum);
  const double one = base.modelled_seconds();
  EXPECT_GT(one, 0.0);
  base.all_reduce(x, ReduceOp::sum);
  EXPECT_NEAR(base.modelled_seconds(), 2 * one, 1e-15);
}

TEST(EmulatedComm, AWorldOfOneIsTheIdentityAndCostsNothing) {
  auto backend = make_backend(BackendKind::cpu);
  EmulatedComm comm(1, 0, kGbps, kLatencyUs, *backend);
  Tensor x = iota_f32({4});
  Tensor gathered = Tensor::host({4}, DType::f32);
  comm.all_gather(x, gathered);
  comm.all_reduce(x, ReduceOp::sum);
  comm.reduce_scatter(gathered, x, ReduceOp::sum);
  comm.broadcast(x, 0);
  comm.barrier();
  EXPECT_EQ(comm.all_reduce_scalar(3.0, ReduceOp::sum), 3.0);
  EXPECT_EQ(values(x), values(iota_f32({4})));
  EXPECT_EQ(values(gathered), values(iota_f32({4})));
  EXPECT_EQ(comm.modelled_seconds(), 0.0);
}

TEST(EmulatedComm, EightRanksOfTheBenchmark) {
  // A 10 MB gradient all-reduce at the defaults, 150 GB/s and 10 us per hop: 14 hops and
  // 2 * 7/8 of the bytes.
  auto backend = make_backend(BackendKind::cpu);
  EmulatedComm comm(8, 0, 150.0, 10.0, *backend);
  Tensor g = Tensor::host({2'500'000}, DType::f32);
  backend->fill(g, 0.5);
  comm.all_reduce(g, ReduceOp::sum);
  EXPECT_NEAR(comm.modelled_seconds(), 14 * 10e-6 + 1.75 * 1e7 / 150e9, 1e-12);
  EXPECT_EQ(g.data<float>()[12345], 4.0f);
}

TEST(EmulatedComm, RejectsWorldsRanksAndLinksThatCannotBe) {
  auto backend = make_backend(BackendKind::cpu);
  EXPECT_THROW(EmulatedComm(0, 0, kGbps, kLatencyUs, *backend), Error);
  EXPECT_THROW(EmulatedComm(4, -1, kGbps, kLatencyUs, *backend), Error);
  EXPECT_THROW(EmulatedComm(4, 4, kGbps, kLatencyUs, *backend), Error);
  EXPECT_THROW(EmulatedComm(4, 0, 0.0, kLatencyUs, *backend), Error);
  EXPECT_THROW(EmulatedComm(4, 0, kGbps, -1.0, *backend), Error);
  EXPECT_THROW(EmulatedComm(4, 0, std::nan(""), kLatencyUs, *backend), Error);
  EXPECT_NO_THROW(EmulatedComm(4, 3, kGbps, 0.0, *backend));
}

}  // namespace
}  // namespace pfc
