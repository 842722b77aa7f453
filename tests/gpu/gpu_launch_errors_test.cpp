// A CUDA error is reported once, by the check after it, and not again: PFC_CHECK_LAUNCH
// clears the thread's last error (cudaGetLastError), so one bad launch does not make every
// later check in the process fail and the test binary blame the wrong tests.
#include <gtest/gtest.h>

#include "gpu_test_support.h"

#ifdef PFC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace pfc::test {
namespace {

#ifdef PFC_HAVE_CUDA

TEST(GpuLaunchErrors, AnErrorIsReportedOnceAndDoesNotStick) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  Tensor x = gpu.empty({1000}, DType::f32, MemoryPurpose::activations);
  // A failed runtime call leaves its error as the thread's last error, as a bad launch does.
  ASSERT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  EXPECT_THROW(gpu.fill(x, 1.0), Error);  // the check after the next launch reports it...
  gpu.fill(x, 2.0);                        // ...and the launches after that are not blamed
  gpu.scale(x, 0.5);
  const Tensor got = to_host_f32(x);
  for (std::int64_t i = 0; i < got.numel(); ++i) ASSERT_EQ(got.data<float>()[i], 1.0f) << i;
}

#else

TEST(GpuLaunchErrors, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace pfc::test
