// Batch-norm in inference mode on the GPU against the CPU backend, in f32 and f16 activations,
// for one row and for many (odd channel counts leave packets unaligned).
#include <string>

#include "gpu_test_support.h"

namespace pfc::test {
namespace {

struct InferenceCase {
  std::string name;
  std::int64_t rows, channels;
  DType dtype;
};

class GpuBatchNormInference : public ::testing::TestWithParam<InferenceCase> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
};

INSTANTIATE_TEST_SUITE_P(Shapes, GpuBatchNormInference,
                         ::testing::Values(InferenceCase{"one_row_f32", 1, 24, DType::f32},
                                           InferenceCase{"tall_f32", 4096, 64, DType::f32},
                                           InferenceCase{"odd_f32", 37, 7, DType::f32},
                                           InferenceCase{"one_row_f16", 1, 24, DType::f16},
                                           InferenceCase{"tall_f16", 4096, 64, DType::f16}),
                         [](const auto& info) { return info.param.name; });

TEST_P(GpuBatchNormInference, MatchesCpu) {
  const InferenceCase& p = GetParam();
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Shape shape{p.rows, p.channels};
  const std::int64_t c = p.channels;
  Tensor x = random_host(shape, -3.0, 3.0, 51);
  if (p.dtype == DType::f16) x = round_to_half(x);
  const Tensor gamma = random_host({c}, 0.5, 1.5, 52);
  const Tensor beta = random_host({c}, -0.5, 0.5, 53);
  const Tensor mean = random_host({c}, -1.0, 1.0, 54);
  const Tensor var = random_host({c}, 0.05, 2.0, 55);

  Tensor y = Tensor::host(shape, DType::f32);
  cpu.batchnorm_forward_inference(x, gamma, beta, mean, var, 1e-5, y);

  const Tensor dx = to_device(x, p.dtype);
  const Tensor dgamma = to_device(gamma, DType::f32), dbeta = to_device(beta, DType::f32);
  const Tensor dmean = to_device(mean, DType::f32), dvar = to_device(var, DType::f32);
  Tensor dy = gpu.empty(shape, p.dtype, MemoryPurpose::activations);
  gpu.batchnorm_forward_inference(dx, dgamma, dbeta, dmean, dvar, 1e-5, dy);
  expect_close(to_host_f32(dy), y, tolerance(p.dtype), "bn inference y");
  expect_close(to_host_f32(dmean), mean, 0, "running_mean (unchanged)");
  expect_close(to_host_f32(dvar), var, 0, "running_var (unchanged)");
}

}  // namespace
}  // namespace pfc::test
