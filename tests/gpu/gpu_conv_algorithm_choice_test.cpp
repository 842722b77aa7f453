// The choice among cuDNN's convolution algorithms (backend/cuda/conv_algorithm_choice.h) on
// lists such as a GPU returns, without a GPU: f32 takes the algorithms cuDNN 9 reports as
// DEFAULT_MATH or FMA_MATH and refuses only the tensor-op math types (TF32); f32 prefers
// deterministic algorithms without operand transforms and falls back to others; f16 takes the
// fastest usable; and when nothing qualifies, every refusal is named with its reason.
#include <gtest/gtest.h>

#include <vector>

#include "gpu_test_support.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/conv_algorithm_choice.h"
#endif

namespace pfc::test {
namespace {

#ifdef PFC_HAVE_CUDA

using cuda::AlgoResult;
using cuda::AlgoVerdict;
using cuda::describe_refusals;
using cuda::judge_algorithm;
using cuda::pick_algorithm;

constexpr std::size_t kMiB = std::size_t{1} << 20;

AlgoResult result(int algo, cudnnMathType_t math, std::size_t memory = 0,
                  cudnnStatus_t status = CUDNN_STATUS_SUCCESS,
                  cudnnDeterminism_t determinism = CUDNN_DETERMINISTIC,
                  bool transforms = false) {
  return {algo, status, memory, math, determinism, transforms};
}

TEST(ConvAlgorithmChoice, F32TakesDefaultAndFmaMathButNoTensorOps) {
  for (cudnnMathType_t math : {CUDNN_DEFAULT_MATH, CUDNN_FMA_MATH})
    EXPECT_EQ(judge_algorithm(result(1, math), DType::f32, 0), AlgoVerdict::usable) << math;
  for (cudnnMathType_t math : {CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION}) {
    EXPECT_EQ(judge_algorithm(result(1, math), DType::f32, 0), AlgoVerdict::tensor_op_math)
        << math;
    EXPECT_EQ(judge_algorithm(result(1, math), DType::f16, 0), AlgoVerdict::usable) << math;
  }
  // A list of only DEFAULT_MATH results, as cuDNN 9 may report f32 algorithms: one is taken.
  const std::vector<AlgoResult> list = {result(0, CUDNN_DEFAULT_MATH),
                                        result(1, CUDNN_DEFAULT_MATH)};
  const auto pick = pick_algorithm(list, DType::f32, 0);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->index, 0u);
  EXPECT_FALSE(pick->inexact_fallback);
}

TEST(ConvAlgorithmChoice, F32PrefersDeterministicUntransformedAndFallsBackWithAFlag) {
  const std::vector<AlgoResult> list = {
      result(7, CUDNN_TENSOR_OP_MATH),                               // TF32: refused
      result(5, CUDNN_FMA_MATH, 0, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, true),  // FFT
      result(3, CUDNN_FMA_MATH, 0, CUDNN_STATUS_SUCCESS, CUDNN_NON_DETERMINISTIC),
      result(1, CUDNN_DEFAULT_MATH, 64 * kMiB),                      // over the limit here
      result(0, CUDNN_DEFAULT_MATH)};
  auto pick = pick_algorithm(list, DType::f32, 32 * kMiB);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(list[pick->index].algo, 0);
  EXPECT_FALSE(pick->inexact_fallback);
  // Allowing the workspace brings the faster exact one first.
  pick = pick_algorithm(list, DType::f32, 64 * kMiB);
  EXPECT_EQ(list[pick->index].algo, 1);
  // Without an exact one, the fastest usable one, flagged.
  const std::vector<AlgoResult> inexact(list.begin(), list.begin() + 3);
  pick = pick_algorithm(inexact, DType::f32, 0);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(inexact[pick->index].algo, 5);
  EXPECT_TRUE(pick->inexact_fallback);
  // f16 takes the fastest usable one of any kind.
  pick = pick_algorithm(list, DType::f16, 0);
  EXPECT_EQ(list[pick->index].algo, 7);
  EXPECT_FALSE(pick->inexact_fallback);
}

TEST(ConvAlgorithmChoice, NothingUsableNamesEveryRefusalAndWhy) {
  const std::vector<AlgoResult> list = {
      result(1, CUDNN_FMA_MATH, 1536 * kMiB),
      result(6, CUDNN_FMA_MATH, 0, CUDNN_STATUS_NOT_SUPPORTED),
      result(2, CUDNN_TENSOR_OP_MATH)};
  EXPECT_FALSE(pick_algorithm(list, DType::f32, 512 * kMiB).has_value());
  const std::string text = describe_refusals(list, DType::f32, 512 * kMiB);
  EXPECT_NE(text.find("algorithm 1: needs 1.50 GiB of workspace, over the 512.0 MiB allowed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("algorithm 6: not supported (CUDNN_STATUS_NOT_SUPPORTED)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("algorithm 2: tensor-op math (TF32), which f32 refuses"),
            std::string::npos)
      << text;
  EXPECT_EQ(describe_refusals({}, DType::f32, 0), "cuDNN listed no algorithm");
}

#endif

}  // namespace
}  // namespace pfc::test
