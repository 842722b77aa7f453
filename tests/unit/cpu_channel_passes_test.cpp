// The CPU backend's f32 batch-norm and PReLU (the vectorised block passes of
// cpu_channel_passes_f32.h) against its f64 reference loops on the same values: training
// forward with its statistics and running averages, backward, inference, the saved-statistics
// recompute, and PReLU both ways. Shapes with a partial last block, one block, a single row
// and channel counts that are no multiple of a vector, so every edge of the blocking runs.
// The tolerance is a few dozen f32 ulps of each quantity's scale: the passes accumulate in f32
// only within a block.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;
using test::to_f64;

// max |f32 - f64| over max(1, max |f64|): the error at the tensor's own scale.
double scaled_error(const Tensor& fast, const Tensor& reference) {
  double err = 0.0, scale = 1.0;
  for (std::int64_t i = 0; i < reference.numel(); ++i) {
    err = std::max(err, std::abs(element(fast, i) - element(reference, i)));
    scale = std::max(scale, std::abs(element(reference, i)));
  }
  return err / scale;
}

struct Shape2 {
  std::int64_t rows, channels;
};

class CpuChannelPasses : public ::testing::TestWithParam<Shape2> {};

// Both precisions' outputs of one call, named for the failure message.
struct Outputs {
  std::vector<std::pair<const char*, Tensor>> f32, f64;
};

void expect_close(const Outputs& out, double tolerance) {
  ASSERT_EQ(out.f32.size(), out.f64.size());
  for (std::size_t i = 0; i < out.f32.size(); ++i)
    EXPECT_LE(scaled_error(out.f32[i].second, out.f64[i].second), tolerance)
        << out.f32[i].first;
}

// Activations in dtype t (f32, or widened to f64); the parameters and statistics f32 in both,
// as in training, so that the two differ in their arithmetic alone.
Tensor activations(DType t, const Tensor& v) {
  if (t == DType::f64) return to_f64(v);
  Tensor c = Tensor::host(v.shape(), DType::f32);
  std::copy(v.data<float>(), v.data<float>() + v.numel(), c.data<float>());
  return c;
}

Tensor copy_of(const Tensor& v) { return activations(DType::f32, v); }

struct Inputs {
  Tensor x, dy, gamma, beta, running_var;
};

// The training forward's outputs: y, then the f32 statistics and running averages.
std::vector<std::pair<const char*, Tensor>> train_forward(DType t, const Inputs& in) {
  const Tensor x = activations(t, in.x);
  const std::int64_t c = x.shape()[1];
  CpuBackend b;
  Tensor rm = copy_of(in.beta), rv = copy_of(in.running_var);
  Tensor y = Tensor::host(x.shape(), t), mean = Tensor::host({c}, DType::f32);
  Tensor invstd = Tensor::host({c}, DType::f32);
  b.batchnorm_forward_train(x, in.gamma, in.beta, rm, rv, 0.1, 1e-5, y, mean, invstd);
  return {{"y", y}, {"saved_mean", mean}, {"saved_invstd", invstd}, {"running_mean", rm},
          {"running_var", rv}};
}

// Everything that follows a training forward, from the same f32 statistics in both.
std::vector<std::pair<const char*, Tensor>> given_statistics(DType t, const Inputs& in,
                                                             const Tensor& mean,
                                                             const Tensor& invstd,
                                                             const Tensor& rm, const Tensor& rv) {
  const Tensor x = activations(t, in.x), dy = activations(t, in.dy);
  const std::int64_t c = x.shape()[1];
  CpuBackend b;
  Tensor dx = Tensor::host(x.shape(), t), dg = Tensor::host({c}, DType::f32);
  Tensor db = Tensor::host({c}, DType::f32);
  b.batchnorm_backward(dy, x, in.gamma, mean, invstd, dx, dg, db);
  Tensor yi = Tensor::host(x.shape(), t), ys = Tensor::host(x.shape(), t);
  b.batchnorm_forward_inference(x, in.gamma, in.beta, rm, rv, 1e-5, yi);
  b.batchnorm_forward_saved(x, in.gamma, in.beta, mean, invstd, ys);
  Tensor py = Tensor::host(x.shape(), t), pdx = Tensor::host(x.shape(), t);
  Tensor ds = Tensor::host({c}, DType::f32);
  b.prelu_forward(x, in.gamma, py);
  b.prelu_backward(dy, x, in.gamma, pdx, ds);
  return {{"dx", dx},           {"dgamma", dg},      {"dbeta", db},      {"y (inference)", yi},
          {"y (saved)", ys},    {"prelu y", py},     {"prelu dx", pdx},  {"prelu dslope", ds}};
}

TEST_P(CpuChannelPasses, MatchTheF64Reference) {
  const auto [rows, channels] = GetParam();
  // An offset mean, as activations have: the statistics must not lose it to cancellation.
  const Inputs in{random_uniform({rows, channels}, DType::f32, 1, 2.0, 5.0),
                  random_uniform({rows, channels}, DType::f32, 2),
                  random_uniform({channels}, DType::f32, 3),
                  random_uniform({channels}, DType::f32, 4),
                  random_uniform({channels}, DType::f32, 5, 0.5, 1.5)};
  // Measured: at most 1.2e-6 of the scale, except the normalisation of two rows, y = x * a + b
  // with per-channel f32 factors (as PyTorch's CPU kernel), which cancels when a channel's
  // spread is small beside its mean (|b| reaches tens): 4.2e-6.
  const double tolerance = 1e-5;
  const auto fast = train_forward(DType::f32, in), reference = train_forward(DType::f64, in);
  expect_close({fast, reference}, tolerance);
  const Tensor& mean = reference[1].second;
  const Tensor& invstd = reference[2].second;
  const Tensor& rm = reference[3].second;
  const Tensor& rv = reference[4].second;
  expect_close({given_statistics(DType::f32, in, mean, invstd, rm, rv),
                given_statistics(DType::f64, in, mean, invstd, rm, rv)},
               tolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuChannelPasses,
                         ::testing::Values(Shape2{2, 64}, Shape2{3000, 48}, Shape2{777, 520},
                                           Shape2{40000, 13}, Shape2{257, 64}),
                         [](const auto& info) {
                           return fmt::format("rows{}_channels{}", info.param.rows,
                                              info.param.channels);
                         });

}  // namespace
}  // namespace pfc
