// Batch-norm (training mode) and PReLU kernels against the CPU backend: outputs, saved and
// running statistics, input and parameter gradients, in f32 and f16 activations.
#include <string>

#include "gpu_test_support.h"

namespace pfc::test {
namespace {

struct NormCase {
  std::string name;
  std::int64_t rows, channels;
  DType dtype;
};

class GpuNorm : public ::testing::TestWithParam<NormCase> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
  DType dtype() const { return GetParam().dtype; }
  Shape shape() const { return {GetParam().rows, GetParam().channels}; }
  std::int64_t channels() const { return GetParam().channels; }
  Tensor activation(double lo, double hi, std::uint64_t seed) const {
    Tensor t = random_host(shape(), lo, hi, seed);
    return dtype() == DType::f16 ? round_to_half(t) : t;
  }
  // Sums over all rows carry a little more f32 rounding than elementwise results.
  double sum_tolerance() const { return dtype() == DType::f16 ? kTolF16 : 4 * kTolF32; }
};

// 24 channels leave part of a 32-channel tile empty; 2048 x 64 spans many row blocks.
INSTANTIATE_TEST_SUITE_P(Shapes, GpuNorm,
                         ::testing::Values(NormCase{"small_f32", 144, 24, DType::f32},
                                           NormCase{"tall_f32", 2048, 64, DType::f32},
                                           NormCase{"small_f16", 144, 24, DType::f16},
                                           NormCase{"tall_f16", 2048, 64, DType::f16}),
                         [](const auto& info) { return info.param.name; });

TEST_P(GpuNorm, BatchNormForwardAndBackward) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t c = channels();
  // An offset mean checks that the statistics do not cancel.
  const Tensor x = activation(2.0, 4.0, 31);
  const Tensor gamma = random_host({c}, 0.5, 1.5, 32);
  const Tensor beta = random_host({c}, -0.5, 0.5, 33);
  const Tensor rm0 = random_host({c}, -0.1, 0.1, 34);
  const Tensor rv0 = random_host({c}, 0.5, 1.5, 35);

  Tensor y = Tensor::host(shape(), DType::f32), rm = clone_host(rm0), rv = clone_host(rv0);
  Tensor sm = Tensor::host({c}, DType::f32), si = Tensor::host({c}, DType::f32);
  cpu.batchnorm_forward_train(x, gamma, beta, rm, rv, 0.1, 1e-5, y, sm, si);

  Tensor dx_ = to_device(x, dtype());
  Tensor dgamma_ = to_device(gamma, DType::f32), dbeta_ = to_device(beta, DType::f32);
  Tensor drm = to_device(rm0, DType::f32), drv = to_device(rv0, DType::f32);
  Tensor dy_out = gpu.empty(shape(), dtype(), MemoryPurpose::activations);
  Tensor dsm = gpu.empty({c}, DType::f32, MemoryPurpose::activations);
  Tensor dsi = gpu.empty({c}, DType::f32, MemoryPurpose::activations);
  gpu.batchnorm_forward_train(dx_, dgamma_, dbeta_, drm, drv, 0.1, 1e-5, dy_out, dsm, dsi);
  const double tol = tolerance(dtype());
  expect_close(to_host_f32(dy_out), y, tol, "bn y");
  expect_close(to_host_f32(dsm), sm, kTolF32, "bn saved_mean");
  expect_close(to_host_f32(dsi), si, sum_tolerance(), "bn saved_invstd");
  expect_close(to_host_f32(drm), rm, kTolF32, "bn running_mean");
  expect_close(to_host_f32(drv), rv, sum_tolerance(), "bn running_var");

  const Tensor dy = activation(-1.0, 1.0, 36);
  Tensor dx = Tensor::host(shape(), DType::f32);
  Tensor dg = Tensor::host({c}, DType::f32), db = Tensor::host({c}, DType::f32);
  cpu.batchnorm_backward(dy, x, gamma, sm, si, dx, dg, db);
  Tensor ddy = to_device(dy, dtype());
  Tensor ddx = gpu.empty(shape(), dtype(), MemoryPurpose::activations);
  Tensor ddg = gpu.empty({c}, DType::f32, MemoryPurpose::gradients);
  Tensor ddb = gpu.empty({c}, DType::f32, MemoryPurpose::gradients);
  // The CPU's saved statistics, so the backward pass is compared on equal inputs.
  Tensor sm_d = to_device(sm, DType::f32), si_d = to_device(si, DType::f32);
  gpu.batchnorm_backward(ddy, dx_, dgamma_, sm_d, si_d, ddx, ddg, ddb);
  expect_close(to_host_f32(ddx), dx, dtype() == DType::f16 ? kTolF16 : 4 * kTolF32, "bn dx");
  expect_close(to_host_f32(ddg), dg, sum_tolerance(), "bn dgamma");
  expect_close(to_host_f32(ddb), db, sum_tolerance(), "bn dbeta");
}

TEST_P(GpuNorm, PreluForwardAndBackward) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t c = channels();
  const Tensor x = activation(-1.0, 1.0, 41);
  const Tensor slope = random_host({c}, 0.1, 0.4, 42);
  const Tensor dy = activation(-1.0, 1.0, 43);

  Tensor y = Tensor::host(shape(), DType::f32);
  cpu.prelu_forward(x, slope, y);
  Tensor dx_ = to_device(x, dtype()), dslope_ = to_device(slope, DType::f32);
  Tensor dy_out = gpu.empty(shape(), dtype(), MemoryPurpose::activations);
  gpu.prelu_forward(dx_, dslope_, dy_out);
  expect_close(to_host_f32(dy_out), y, tolerance(dtype()), "prelu y");

  Tensor dx = Tensor::host(shape(), DType::f32), ds = Tensor::host({c}, DType::f32);
  cpu.prelu_backward(dy, x, slope, dx, ds);
  Tensor ddy = to_device(dy, dtype());
  Tensor ddx = gpu.empty(shape(), dtype(), MemoryPurpose::activations);
  Tensor dds = gpu.empty({c}, DType::f32, MemoryPurpose::gradients);
  gpu.prelu_backward(ddy, dx_, dslope_, ddx, dds);
  expect_close(to_host_f32(ddx), dx, tolerance(dtype()), "prelu dx");
  expect_close(to_host_f32(dds), ds, sum_tolerance(), "prelu dslope");
}

TEST(GpuNormChecks, NhwcActivationsAreViewedPerChannel) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // A 4-D NHWC tensor gives the same result as its [rows, channels] view.
  const Tensor x4 = random_host({2, 3, 3, 8}, -1.0, 1.0, 44);
  const Tensor slope = random_host({8}, 0.1, 0.4, 45);
  Tensor y = Tensor::host({18, 8}, DType::f32);
  cpu.prelu_forward(x4.reshape({18, 8}), slope, y);
  Tensor dx = to_device(x4, DType::f32), ds = to_device(slope, DType::f32);
  Tensor dy = gpu.empty({2, 3, 3, 8}, DType::f32, MemoryPurpose::activations);
  gpu.prelu_forward(dx, ds, dy);
  expect_close(to_host_f32(dy).reshape({18, 8}), y, kTolF32, "prelu on NHWC");
}

}  // namespace
}  // namespace pfc::test
