// MpiComm on 1..4 ranks: every collective and element type, gathering in place, buffers
// split into several MPI calls, and errors that name the call (PFC_CHECK_MPI).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "comm/mpi_check.h"
#include "comm/mpi_comm.h"
#include "core/half.h"

namespace pfc {
namespace {

// Element i of rank r's contribution.
double value_of(int rank, std::int64_t i) { return 100.0 * rank + static_cast<double>(i) - 3.0; }

template <class T>
Tensor filled(std::int64_t rows, std::int64_t cols, int rank) {
  Tensor t = Tensor::host({rows, cols}, dtype_of<T>::value);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = static_cast<T>(value_of(rank, i));
  return t;
}

class MpiCommTest : public ::testing::TestWithParam<std::int64_t> {
 protected:
  // The parameter is MpiComm's max_count: INT_MAX moves every buffer in one call, 3 splits
  // every buffer here into several.
  MpiComm comm{MPI_COMM_WORLD, GetParam()};
  int rank = comm.rank();
  int world = comm.world_size();
};

TEST_P(MpiCommTest, KnowsItsPlace) {
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  EXPECT_EQ(rank, world_rank);
  EXPECT_EQ(world, world_size);
  // The tests run on one node: the node-local rank is the rank.
  EXPECT_EQ(comm.local_rank(), world_rank);
  EXPECT_EQ(comm.name(), "mpi");
}

template <class T>
void check_all_gather(MpiComm& comm) {
  const int world = comm.world_size();
  Tensor send = filled<T>(5, 2, comm.rank());
  Tensor recv = Tensor::host({5 * world, 2}, dtype_of<T>::value);
  comm.all_gather(send, recv);
  for (int r = 0; r < world; ++r)
    for (std::int64_t i = 0; i < 10; ++i)
      ASSERT_EQ(recv.data<T>()[r * 10 + i], static_cast<T>(value_of(r, i)))
          << dtype_name(dtype_of<T>::value) << " rank " << r << " element " << i;
}

TEST_P(MpiCommTest, AllGatherEveryType) {
  check_all_gather<float>(comm);
  check_all_gather<double>(comm);
  check_all_gather<std::int64_t>(comm);
  check_all_gather<std::int32_t>(comm);
  check_all_gather<std::uint8_t>(comm);
}

TEST_P(MpiCommTest, AllGatherMovesHalfAsRawBits) {
  Tensor send = Tensor::host({7}, DType::f16);
  for (int i = 0; i < 7; ++i)
    send.data<Half>()[i] = Half::from_bits(static_cast<std::uint16_t>(0xFC00 + 16 * rank + i));
  Tensor recv = Tensor::host({7 * world}, DType::f16);
  comm.all_gather(send, recv);
  for (int r = 0; r < world; ++r)
    for (int i = 0; i < 7; ++i)
      ASSERT_EQ(recv.data<Half>()[r * 7 + i].bits(), 0xFC00 + 16 * r + i);
}

TEST_P(MpiCommTest, AllGatherInPlace) {
  Tensor recv = Tensor::host({4 * world, 3}, DType::f32);
  Tensor own = recv.rows(4 * rank, 4 * rank + 4);
  for (std::int64_t i = 0; i < 12; ++i)
    own.data<float>()[i] = static_cast<float>(value_of(rank, i));
  comm.all_gather(own, recv);
  for (int r = 0; r < world; ++r)
    for (std::int64_t i = 0; i < 12; ++i)
      ASSERT_EQ(recv.data<float>()[r * 12 + i], static_cast<float>(value_of(r, i)));
}

TEST_P(MpiCommTest, AllReduceSumAndMax) {
  Tensor f = filled<float>(3, 4, rank);
  Tensor d = filled<double>(11, 1, rank);
  Tensor l = filled<std::int64_t>(2, 5, rank);
  comm.all_reduce(f, ReduceOp::sum);
  comm.all_reduce(d, ReduceOp::max);
  comm.all_reduce(l, ReduceOp::sum);
  for (std::int64_t i = 0; i < 12; ++i) {
    double sum = 0.0;
    for (int r = 0; r < world; ++r) sum += value_of(r, i);
    ASSERT_EQ(f.data<float>()[i], static_cast<float>(sum));
  }
  for (std::int64_t i = 0; i < 11; ++i) ASSERT_EQ(d.data<double>()[i], value_of(world - 1, i));
  for (std::int64_t i = 0; i < 10; ++i) {
    std::int64_t sum = 0;
    for (int r = 0; r < world; ++r) sum += static_cast<std::int64_t>(value_of(r, i));
    ASSERT_EQ(l.data<std::int64_t>()[i], sum);
  }
}

TEST_P(MpiCommTest, ReduceScatterSumAndMax) {
  Tensor send = filled<float>(world * 4, 2, rank);
  Tensor sum = Tensor::host({4, 2}, DType::f32);
  Tensor max = Tensor::host({4, 2}, DType::f32);
  comm.reduce_scatter(send, sum, ReduceOp::sum);
  comm.reduce_scatter(send, max, ReduceOp::max);
  for (std::int64_t i = 0; i < 8; ++i) {
    const std::int64_t at = rank * 8 + i;
    double expected = 0.0;
    for (int r = 0; r < world; ++r) expected += value_of(r, at);
    ASSERT_EQ(sum.data<float>()[i], static_cast<float>(expected));
    ASSERT_EQ(max.data<float>()[i], static_cast<float>(value_of(world - 1, at)));
  }
}

TEST_P(MpiCommTest, BroadcastFromEveryRoot) {
  for (int root = 0; root < world; ++root) {
    Tensor x = filled<double>(3, 3, rank);
    Tensor h = Tensor::host({5}, DType::f16);
    for (int i = 0; i < 5; ++i) h.data<Half>()[i] = Half(static_cast<float>(rank + i));
    comm.broadcast(x, root);
    comm.broadcast(h, root);
    for (std::int64_t i = 0; i < 9; ++i) ASSERT_EQ(x.data<double>()[i], value_of(root, i));
    for (int i = 0; i < 5; ++i)
      ASSERT_EQ(h.data<Half>()[i].to_float(), static_cast<float>(root + i));
  }
}

TEST_P(MpiCommTest, ScalarsAndBarrier) {
  EXPECT_EQ(comm.all_reduce_scalar(rank + 0.5, ReduceOp::sum),
            world * (world - 1) / 2.0 + 0.5 * world);
  EXPECT_EQ(comm.all_reduce_scalar(-rank, ReduceOp::max), 0.0);
  comm.barrier();
}

TEST_P(MpiCommTest, RejectsWhatItCannotDo) {
  Tensor h = Tensor::host({4}, DType::f16);
  EXPECT_THROW(comm.all_reduce(h, ReduceOp::sum), Error);
  Tensor send = Tensor::host({4}, DType::f32);
  Tensor wrong_size = Tensor::host({4 * world + 1}, DType::f32);
  EXPECT_THROW(comm.all_gather(send, wrong_size), Error);
  Tensor wrong_type = Tensor::host({4 * world}, DType::f64);
  EXPECT_THROW(comm.all_gather(send, wrong_type), Error);
  Tensor x = Tensor::host({2}, DType::f32);
  EXPECT_THROW(comm.broadcast(x, world), Error);
  comm.barrier();
}

INSTANTIATE_TEST_SUITE_P(WholeAndPiecewise, MpiCommTest, ::testing::Values(INT_MAX, 3));

TEST(MpiCheck, NamesTheCallAndMpisMessage) {
  MpiComm comm;
  int value = 0;
  try {
    // A root outside the communicator: MPI reports it, the communicator returns the code.
    PFC_CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, comm.world_size() + 5, comm.handle()));
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("MPI_Bcast failed"), std::string::npos) << what;
    EXPECT_NE(what.find("mpi_comm_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("MPI error"), std::string::npos) << what;
  }
  comm.barrier();
}

TEST(MpiCommFactory, MakesAWorldCommunicator) {
  const auto comm = make_mpi_comm(0.0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(comm->world_size(), size);
}

}  // namespace
}  // namespace pfc
