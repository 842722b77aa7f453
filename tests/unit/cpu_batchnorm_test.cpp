// CpuBackend batch-norm (training mode) against the textbook definition, its running-stat
// update (unbiased variance), and its gradients (x, gamma, beta) against finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

constexpr double kEps = 1e-5;
constexpr double kMomentum = 0.1;

struct TextbookBatchNorm {
  Tensor y, mean, invstd, running_mean, running_var;  // all f64
};

TextbookBatchNorm textbook(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           const Tensor& running_mean, const Tensor& running_var) {
  const std::int64_t rows = x.dim(0), channels = x.dim(1);
  TextbookBatchNorm r{Tensor::host(x.shape(), DType::f64), Tensor::host({channels}, DType::f64),
                      Tensor::host({channels}, DType::f64), Tensor::host({channels}, DType::f64),
                      Tensor::host({channels}, DType::f64)};
  for (std::int64_t c = 0; c < channels; ++c) {
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < rows; ++i) mean += element(x, i * channels + c);
    mean /= rows;
    for (std::int64_t i = 0; i < rows; ++i) {
      const double d = element(x, i * channels + c) - mean;
      var += d * d;
    }
    var /= rows;
    const double invstd = 1.0 / std::sqrt(var + kEps);
    for (std::int64_t i = 0; i < rows; ++i)
      r.y.data<double>()[i * channels + c] =
          element(gamma, c) * (element(x, i * channels + c) - mean) * invstd + element(beta, c);
    r.mean.data<double>()[c] = mean;
    r.invstd.data<double>()[c] = invstd;
    r.running_mean.data<double>()[c] =
        (1 - kMomentum) * element(running_mean, c) + kMomentum * mean;
    r.running_var.data<double>()[c] =
        (1 - kMomentum) * element(running_var, c) + kMomentum * var * rows / (rows - 1);
  }
  return r;
}

Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::host(t.shape(), t.dtype());
  CpuBackend().copy(t, c);
  return c;
}

void expect_forward_matches_textbook(DType x_type, DType param_type) {
  CpuBackend backend;
  const std::int64_t rows = 37, channels = 6;
  const Tensor x = random_uniform({rows, channels}, x_type, 1, -2.0, 3.0);
  const Tensor gamma = random_uniform({channels}, param_type, 2, 0.5, 1.5);
  const Tensor beta = random_uniform({channels}, param_type, 3);
  Tensor running_mean = random_uniform({channels}, param_type, 4);
  Tensor running_var = random_uniform({channels}, param_type, 5, 0.5, 2.0);
  const TextbookBatchNorm want = textbook(x, gamma, beta, running_mean, running_var);

  Tensor y = Tensor::host(x.shape(), x_type);
  Tensor saved_mean = Tensor::host({channels}, param_type);
  Tensor saved_invstd = Tensor::host({channels}, param_type);
  backend.batchnorm_forward_train(x, gamma, beta, running_mean, running_var, kMomentum, kEps, y,
                                  saved_mean, saved_invstd);
  const double tol = x_type == DType::f64 && param_type == DType::f64 ? 1e-12 : 1e-5;
  test::expect_tensors_near(y, want.y, tol, tol, "y");
  test::expect_tensors_near(saved_mean, want.mean, tol, tol, "saved_mean");
  test::expect_tensors_near(saved_invstd, want.invstd, tol, tol, "saved_invstd");
  test::expect_tensors_near(running_mean, want.running_mean, tol, tol, "running_mean");
  test::expect_tensors_near(running_var, want.running_var, tol, tol, "running_var");
}

TEST(CpuBatchNorm, ForwardAndRunningStatsMatchTextbookF32) {
  expect_forward_matches_textbook(DType::f32, DType::f32);
}

TEST(CpuBatchNorm, ForwardAndRunningStatsMatchTextbookF64) {
  expect_forward_matches_textbook(DType::f64, DType::f64);
}

TEST(CpuBatchNorm, F64ActivationsAcceptF32Parameters) {
  expect_forward_matches_textbook(DType::f64, DType::f32);
}

TEST(CpuBatchNorm, RunningVarianceUsesUnbiasedEstimate) {
  // Two rows 0 and 2: batch mean 1, biased variance 1, unbiased 2.
  CpuBackend backend;
  Tensor x = Tensor::host({2, 1}, DType::f32);
  x.data<float>()[0] = 0.0f;
  x.data<float>()[1] = 2.0f;
  Tensor gamma = Tensor::host({1}, DType::f32), beta = Tensor::host({1}, DType::f32);
  Tensor rm = Tensor::host({1}, DType::f32), rv = Tensor::host({1}, DType::f32);
  backend.fill(gamma, 1.0);
  backend.fill(beta, 0.0);
  backend.fill(rm, 0.0);
  backend.fill(rv, 1.0);
  Tensor y = Tensor::host({2, 1}, DType::f32);
  Tensor sm = Tensor::host({1}, DType::f32), si = Tensor::host({1}, DType::f32);
  backend.batchnorm_forward_train(x, gamma, beta, rm, rv, kMomentum, kEps, y, sm, si);
  EXPECT_FLOAT_EQ(rm.data<float>()[0], 0.1f);  // 0.9 * 0 + 0.1 * 1
  EXPECT_FLOAT_EQ(rv.data<float>()[0], 1.1f);  // 0.9 * 1 + 0.1 * 2
  EXPECT_FLOAT_EQ(si.data<float>()[0], static_cast<float>(1.0 / std::sqrt(1.0 + kEps)));
  EXPECT_NEAR(y.data<float>()[0], -1.0f, 1e-5f);
  EXPECT_NEAR(y.data<float>()[1], 1.0f, 1e-5f);
}

TEST(CpuBatchNorm, GradientsMatchFiniteDifferences) {
  CpuBackend backend;
  const std::int64_t rows = 11, channels = 5;
  const Tensor running_mean = random_uniform({channels}, DType::f64, 10);
  const Tensor running_var = random_uniform({channels}, DType::f64, 11, 0.5, 2.0);
  // The forward updates running statistics: every evaluation starts from the same ones.
  auto forward = [&](const std::vector<Tensor>& in, Tensor& mean, Tensor& invstd) {
    Tensor rm = copy_of(running_mean), rv = copy_of(running_var);
    Tensor y = Tensor::host(in[0].shape(), DType::f64);
    backend.batchnorm_forward_train(in[0], in[1], in[2], rm, rv, kMomentum, kEps, y, mean, invstd);
    return y;
  };
  test::check_gradients(
      {{"x", random_uniform({rows, channels}, DType::f64, 12, -1.0, 2.0)},
       {"gamma", random_uniform({channels}, DType::f64, 13, 0.5, 1.5)},
       {"beta", random_uniform({channels}, DType::f64, 14)}},
      [&](const std::vector<Tensor>& in) {
        Tensor mean = Tensor::host({channels}, DType::f64);
        Tensor invstd = Tensor::host({channels}, DType::f64);
        return std::vector<Tensor>{forward(in, mean, invstd)};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor mean = Tensor::host({channels}, DType::f64);
        Tensor invstd = Tensor::host({channels}, DType::f64);
        forward(in, mean, invstd);
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        Tensor dgamma = Tensor::host({channels}, DType::f64);
        Tensor dbeta = Tensor::host({channels}, DType::f64);
        backend.batchnorm_backward(dout[0], in[0], in[1], mean, invstd, dx, dgamma, dbeta);
        return std::vector<Tensor>{dx, dgamma, dbeta};
      });
}

TEST(CpuBatchNorm, RejectsMismatchedParameterTypes) {
  CpuBackend backend;
  Tensor x = random_uniform({4, 3}, DType::f32, 1);
  Tensor p = random_uniform({3}, DType::f64, 2);
  Tensor y = Tensor::host({4, 3}, DType::f32);
  Tensor rm = copy_of(p), rv = copy_of(p), sm = copy_of(p), si = copy_of(p), b = copy_of(p);
  try {
    backend.batchnorm_forward_train(x, p, b, rm, rv, kMomentum, kEps, y, sm, si);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gamma is f64, expected f32"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pfc
