// CpuBackend batch-norm in inference mode against its definition (running statistics in place
// of the batch's), for any row count, one included; the statistics stay untouched.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

constexpr double kEps = 1e-5;

Tensor definition(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                  const Tensor& var) {
  const std::int64_t rows = x.dim(0), channels = x.dim(1);
  Tensor y = Tensor::host(x.shape(), DType::f64);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t i = r * channels + c;
      y.data<double>()[i] = (element(x, i) - element(mean, c)) /
                                std::sqrt(element(var, c) + kEps) * element(gamma, c) +
                            element(beta, c);
    }
  return y;
}

void expect_matches_definition(std::int64_t rows, DType x_type, DType param_type) {
  CpuBackend backend;
  const std::int64_t channels = 7;
  const Tensor x = random_uniform({rows, channels}, x_type, 1, -2.0, 3.0);
  const Tensor gamma = random_uniform({channels}, param_type, 2, 0.5, 1.5);
  const Tensor beta = random_uniform({channels}, param_type, 3);
  const Tensor mean = random_uniform({channels}, param_type, 4);
  const Tensor var = random_uniform({channels}, param_type, 5, 0.01, 2.0);
  const Tensor mean_before = random_uniform({channels}, param_type, 4);
  const Tensor var_before = random_uniform({channels}, param_type, 5, 0.01, 2.0);

  Tensor y = Tensor::host(x.shape(), x_type);
  backend.batchnorm_forward_inference(x, gamma, beta, mean, var, kEps, y);
  const double tol = x_type == DType::f64 && param_type == DType::f64 ? 1e-13 : 2e-6;
  test::expect_tensors_near(y, definition(x, gamma, beta, mean, var), tol, tol, "y");
  test::expect_tensors_near(mean, mean_before, 0, 0, "running_mean (unchanged)");
  test::expect_tensors_near(var, var_before, 0, 0, "running_var (unchanged)");
}

TEST(CpuBatchNormInference, MatchesDefinitionF32) {
  expect_matches_definition(29, DType::f32, DType::f32);
}

TEST(CpuBatchNormInference, MatchesDefinitionF64) {
  expect_matches_definition(29, DType::f64, DType::f64);
}

TEST(CpuBatchNormInference, F64ActivationsAcceptF32Parameters) {
  expect_matches_definition(29, DType::f64, DType::f32);
}

TEST(CpuBatchNormInference, OneRowIsEnough) {
  // Training mode refuses a single row (no unbiased variance); inference needs none.
  expect_matches_definition(1, DType::f32, DType::f32);
}

TEST(CpuBatchNormInference, EachRowIsNormalisedOnItsOwn) {
  // The same row alone and inside a batch gives the same values: no batch statistics.
  CpuBackend backend;
  const std::int64_t channels = 5;
  const Tensor x = random_uniform({9, channels}, DType::f32, 6);
  const Tensor gamma = random_uniform({channels}, DType::f32, 7, 0.5, 1.5);
  const Tensor beta = random_uniform({channels}, DType::f32, 8);
  const Tensor mean = random_uniform({channels}, DType::f32, 9);
  const Tensor var = random_uniform({channels}, DType::f32, 10, 0.5, 2.0);
  Tensor all = Tensor::host(x.shape(), DType::f32);
  backend.batchnorm_forward_inference(x, gamma, beta, mean, var, kEps, all);
  Tensor one = Tensor::host({1, channels}, DType::f32);
  backend.batchnorm_forward_inference(x.rows(4, 5), gamma, beta, mean, var, kEps, one);
  test::expect_tensors_near(one, all.rows(4, 5), 0, 0, "row 4 alone");
}

TEST(CpuBatchNormInference, NamesAMismatchedOperand) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 3}, DType::f32, 11);
  const Tensor p3 = random_uniform({3}, DType::f32, 12, 0.5, 1.0);
  const Tensor p2 = random_uniform({2}, DType::f32, 13, 0.5, 1.0);
  Tensor y = Tensor::host({4, 3}, DType::f32);
  try {
    backend.batchnorm_forward_inference(x, p3, p3, p3, p2, kEps, y);
    FAIL() << "a running_var of 2 channels for 3 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("running_var"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pfc
