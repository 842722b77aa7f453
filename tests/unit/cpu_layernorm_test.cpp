// CpuBackend LayerNorm (torch.nn.LayerNorm over the last dimension) against its definition in
// f32 and f64, and its gradients (x, gamma, beta) against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// y = (x - mean) / sqrt(var + eps) * gamma + beta per row, var biased, all in f64.
Tensor definition(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const std::int64_t width = x.shape().back(), rows = x.numel() / width;
  Tensor y = Tensor::host(x.shape(), DType::f64);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < width; ++c) mean += element(x, r * width + c) / width;
    for (std::int64_t c = 0; c < width; ++c)
      var += std::pow(element(x, r * width + c) - mean, 2) / width;
    for (std::int64_t c = 0; c < width; ++c)
      y.data<double>()[r * width + c] = (element(x, r * width + c) - mean) /
                                            std::sqrt(var + eps) * element(gamma, c) +
                                        element(beta, c);
  }
  return y;
}

TEST(CpuLayerNorm, ForwardMatchesDefinitionInF32AndF64) {
  CpuBackend backend;
  for (const DType dtype : {DType::f32, DType::f64}) {
    // [batch, tokens, width], an offset mean so that the statistics do not cancel.
    const Tensor x = random_uniform({2, 5, 12}, dtype, 1, 2.0, 4.0);
    const Tensor gamma = random_uniform({12}, dtype, 2, 0.5, 1.5);
    const Tensor beta = random_uniform({12}, dtype, 3);
    Tensor y = Tensor::host(x.shape(), dtype);
    Tensor mean = Tensor::host({10}, dtype), invstd = Tensor::host({10}, dtype);
    backend.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd);
    const double tol = dtype == DType::f32 ? 1e-5 : 1e-12;
    test::expect_tensors_near(y, definition(x, gamma, beta, 1e-6), tol, tol, "y");
  }
}

TEST(CpuLayerNorm, F32ParametersBesideF64Activations) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 6}, DType::f64, 4);
  const Tensor gamma = random_uniform({6}, DType::f32, 5, 0.5, 1.5);
  const Tensor beta = random_uniform({6}, DType::f32, 6);
  Tensor y = Tensor::host(x.shape(), DType::f64);
  Tensor mean = Tensor::host({4}, DType::f64), invstd = Tensor::host({4}, DType::f64);
  backend.layernorm_forward(x, gamma, beta, 1e-5, y, mean, invstd);
  test::expect_tensors_near(y, definition(x, gamma, beta, 1e-5), 1e-12, 1e-12, "y");
}

TEST(CpuLayerNorm, GradientsMatchFiniteDifferences) {
  CpuBackend backend;
  const std::int64_t rows = 7, width = 9;
  test::check_gradients(
      {{"x", random_uniform({rows, width}, DType::f64, 7)},
       {"gamma", random_uniform({width}, DType::f64, 8, 0.5, 1.5)},
       {"beta", random_uniform({width}, DType::f64, 9)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        Tensor mean = Tensor::host({rows}, DType::f64), invstd = Tensor::host({rows}, DType::f64);
        backend.layernorm_forward(in[0], in[1], in[2], 1e-6, y, mean, invstd);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        Tensor mean = Tensor::host({rows}, DType::f64), invstd = Tensor::host({rows}, DType::f64);
        backend.layernorm_forward(in[0], in[1], in[2], 1e-6, y, mean, invstd);
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        Tensor dgamma = Tensor::host({width}, DType::f64), dbeta = Tensor::host({width}, DType::f64);
        backend.layernorm_backward(dout[0], in[0], in[1], mean, invstd, dx, dgamma, dbeta);
        return std::vector<Tensor>{dx, dgamma, dbeta};
      });
}

TEST(CpuLayerNorm, F32BackwardAgreesWithF64) {
  CpuBackend backend;
  const std::int64_t rows = 33, width = 16;
  Tensor dx[2], dgamma[2];
  const DType types[2] = {DType::f32, DType::f64};
  for (int i = 0; i < 2; ++i) {
    const DType t = types[i];
    const Tensor x = random_uniform({rows, width}, t, 10);
    const Tensor gamma = random_uniform({width}, t, 11, 0.5, 1.5);
    const Tensor beta = random_uniform({width}, t, 12);
    const Tensor dy = random_uniform({rows, width}, t, 13);
    Tensor y = Tensor::host({rows, width}, t);
    Tensor mean = Tensor::host({rows}, t), invstd = Tensor::host({rows}, t);
    backend.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd);
    dx[i] = Tensor::host({rows, width}, t);
    dgamma[i] = Tensor::host({width}, t);
    Tensor dbeta = Tensor::host({width}, t);
    backend.layernorm_backward(dy, x, gamma, mean, invstd, dx[i], dgamma[i], dbeta);
  }
  test::expect_tensors_near(dx[0], dx[1], 1e-4, 1e-5, "dx");
  test::expect_tensors_near(dgamma[0], dgamma[1], 1e-4, 1e-5, "dgamma");
}

// For a bf16 product to read (bf16 inference): the f32 output, each value rounded once.
TEST(CpuLayerNorm, Bf16OutputIsTheF32OutputRounded) {
  CpuBackend backend;
  for (const std::int64_t width : {7, 16, 256, 300}) {
    const Tensor x = random_uniform({5, width}, DType::f32, 1, -3.0, 3.0);
    const Tensor gamma = random_uniform({width}, DType::f32, 2, 0.5, 1.5);
    const Tensor beta = random_uniform({width}, DType::f32, 3);
    Tensor mean = Tensor::host({5}, DType::f32), invstd = Tensor::host({5}, DType::f32);
    Tensor y = Tensor::host(x.shape(), DType::f32);
    backend.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd);
    Tensor want = Tensor::host(x.shape(), DType::bf16);
    backend.cast(y, want);
    Tensor y16 = Tensor::host(x.shape(), DType::bf16);
    backend.layernorm_forward(x, gamma, beta, 1e-6, y16, mean, invstd);
    EXPECT_EQ(std::memcmp(y16.raw(), want.raw(), want.bytes()), 0) << "width " << width;
  }
  const Tensor x64 = random_uniform({2, 4}, DType::f64, 1);
  const Tensor gamma64 = random_uniform({4}, DType::f64, 2);
  Tensor mean = Tensor::host({2}, DType::f64), invstd = Tensor::host({2}, DType::f64);
  Tensor y16 = Tensor::host({2, 4}, DType::bf16);
  EXPECT_THROW(backend.layernorm_forward(x64, gamma64, gamma64, 1e-6, y16, mean, invstd), Error);
}

TEST(CpuLayerNorm, RejectsStatisticsOfWrongLength) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 3}, DType::f32, 1);
  const Tensor gamma = random_uniform({3}, DType::f32, 2), beta = random_uniform({3}, DType::f32, 3);
  Tensor y = Tensor::host({4, 3}, DType::f32);
  Tensor mean = Tensor::host({3}, DType::f32), invstd = Tensor::host({4}, DType::f32);
  EXPECT_THROW(backend.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd), Error);
}

}  // namespace
}  // namespace pfc
