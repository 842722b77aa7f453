// NcclComm on one rank (the GPU machine has one GPU): every collective on device tensors,
// ordered with the backend's stream, and the host scalar all-reduce. MPI is started here
// when the process has not started it, and finished when the tests end.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "gpu_test_support.h"

#ifdef PFC_HAVE_CUDA
#include <mpi.h>

#include "app/process_context.h"
#include "comm/cuda/nccl_comm.h"
#endif

namespace pfc::test {
namespace {

#ifdef PFC_HAVE_CUDA

bool& mpi_started_here() {
  static bool started = false;
  return started;
}

void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    prefer_isolated_singleton();  // as pfc itself: no orted needed
    MPI_Init(nullptr, nullptr);
    mpi_started_here() = true;
  }
}

// Finishes MPI after every test (and every communicator) is gone.
class MpiFinalizer : public ::testing::Environment {
 public:
  void TearDown() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (mpi_started_here() && !finalized) MPI_Finalize();
  }
};

const ::testing::Environment* const kMpiFinalizer =
    ::testing::AddGlobalTestEnvironment(new MpiFinalizer);

class NcclCommTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PFC_REQUIRE_GPU();
    ensure_mpi();
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (world != 1) GTEST_SKIP() << "single-rank test run under " << world << " ranks";
  }
};

TEST_F(NcclCommTest, PicksTheNodeLocalGpu) {
  EXPECT_EQ(nccl_device_ordinal(MPI_COMM_WORLD), 0);
  std::unique_ptr<Comm> comm = make_nccl_comm(gpu_backend());
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->world_size(), 1);
  EXPECT_EQ(comm->local_rank(), 0);
  EXPECT_EQ(comm->name(), "nccl");
}

TEST_F(NcclCommTest, CollectivesOnOneRank) {
  Backend& gpu = gpu_backend();
  std::unique_ptr<Comm> comm = make_nccl_comm(gpu);
  const Tensor host = random_host({64, 3}, -1.0, 1.0, 91);

  // Queued right behind a fill on the backend's stream: the collective must see its result.
  Tensor x = gpu.empty({64, 3}, DType::f32, MemoryPurpose::comm);
  gpu.fill(x, 2.5);
  comm->all_reduce(x, ReduceOp::sum);
  gpu.scale(x, 2.0);  // and work queued after it must see the collective's result
  Tensor got = to_host_f32(x);
  for (std::int64_t i = 0; i < got.numel(); ++i) ASSERT_EQ(got.data<float>()[i], 5.0f);

  Tensor y = to_device(host, DType::f16, MemoryPurpose::comm);
  comm->all_reduce(y, ReduceOp::max);
  expect_close(to_host_f32(y), round_to_half(host), 0.0, "all_reduce max (f16)");

  Tensor send = to_device(host, DType::f32, MemoryPurpose::comm);
  Tensor gathered = gpu.empty({64, 3}, DType::f32, MemoryPurpose::comm);
  comm->all_gather(send, gathered);
  expect_close(to_host_f32(gathered), host, 0.0, "all_gather");

  Tensor scattered = gpu.empty({64, 3}, DType::f32, MemoryPurpose::comm);
  comm->reduce_scatter(send, scattered, ReduceOp::sum);
  expect_close(to_host_f32(scattered), host, 0.0, "reduce_scatter");

  comm->broadcast(send, 0);
  expect_close(to_host_f32(send), host, 0.0, "broadcast");

  EXPECT_EQ(comm->all_reduce_scalar(1.5, ReduceOp::sum), 1.5);
  EXPECT_EQ(comm->all_reduce_scalar(-3.0, ReduceOp::max), -3.0);
  comm->barrier();
}

TEST_F(NcclCommTest, RejectsHostTensorsAndWrongShapes) {
  Backend& gpu = gpu_backend();
  std::unique_ptr<Comm> comm = make_nccl_comm(gpu);
  Tensor host = Tensor::host({4}, DType::f32);
  EXPECT_THROW(comm->all_reduce(host, ReduceOp::sum), Error);
  Tensor send = gpu.zeros({4, 2}, DType::f32, MemoryPurpose::comm);
  Tensor recv = gpu.zeros({5, 2}, DType::f32, MemoryPurpose::comm);
  EXPECT_THROW(comm->all_gather(send, recv), Error);
  EXPECT_THROW(make_nccl_comm(cpu_backend()), Error);
}

#else

TEST(NcclCommTest, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace pfc::test
