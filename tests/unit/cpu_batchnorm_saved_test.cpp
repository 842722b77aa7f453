// CpuBackend's batchnorm_forward_saved: a training forward's output recomputed from the input
// and the statistics it saved, against its definition, equal bit for bit to that forward's
// output in an f64 run and within an f32 rounding in f32 (backend.h says why).
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

void expect_recomputes_the_forward(DType x_type, DType param_type, double tol) {
  CpuBackend backend;
  const std::int64_t rows = 50, channels = 6;
  const Tensor x = random_uniform({rows, channels}, x_type, 1, -2.0, 3.0);
  const Tensor gamma = random_uniform({channels}, param_type, 2, 0.5, 1.5);
  const Tensor beta = random_uniform({channels}, param_type, 3);
  Tensor running_mean = random_uniform({channels}, param_type, 4);
  Tensor running_var = random_uniform({channels}, param_type, 5, 0.5, 1.5);
  Tensor y = Tensor::host(x.shape(), x_type), again = Tensor::host(x.shape(), x_type);
  Tensor mean = Tensor::host({channels}, param_type), invstd = Tensor::host({channels}, param_type);
  backend.batchnorm_forward_train(x, gamma, beta, running_mean, running_var, 0.1, 1e-5, y, mean,
                                  invstd);
  backend.batchnorm_forward_saved(x, gamma, beta, mean, invstd, again);
  const std::string what = fmt::format("x {} parameters {}", dtype_name(x_type),
                                       dtype_name(param_type));
  test::expect_tensors_near(again, y, tol, tol, what + ": against the training forward");
  Tensor definition = Tensor::host(x.shape(), DType::f64);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c)
      definition.data<double>()[r * channels + c] =
          (element(x, r * channels + c) - element(mean, c)) * element(invstd, c) *
              element(gamma, c) +
          element(beta, c);
  test::expect_tensors_near(again, definition, tol + 1e-12, tol + 1e-12,
                            what + ": against the definition");
}

TEST(CpuBatchNormSaved, RecomputesTheTrainingForwardExactlyInF64) {
  expect_recomputes_the_forward(DType::f64, DType::f64, 0.0);
}

TEST(CpuBatchNormSaved, RecomputesTheTrainingForwardWithinAnF32RoundingInF32) {
  expect_recomputes_the_forward(DType::f32, DType::f32, 2e-6);
}

TEST(CpuBatchNormSaved, ChecksItsOperands) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 3}, DType::f32, 1);
  const Tensor p = random_uniform({3}, DType::f32, 2), short_p = random_uniform({2}, DType::f32, 3);
  Tensor y = Tensor::host({4, 3}, DType::f32), y_f64 = Tensor::host({4, 3}, DType::f64);
  EXPECT_THROW(backend.batchnorm_forward_saved(x, p, p, short_p, p, y), Error);
  EXPECT_THROW(backend.batchnorm_forward_saved(x, p, p, p, p, y_f64), Error);
}

}  // namespace
}  // namespace pfc
