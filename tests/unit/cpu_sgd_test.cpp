// CpuBackend SGD against a hand-written loop of PyTorch's update rule over several steps,
// dense and on sampled rows (unsampled rows and their momentum untouched).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

constexpr double kLr = 0.2, kMomentum = 0.9, kDecay = 5e-4;

// torch.optim.SGD(momentum=0.9, weight_decay=5e-4) on one element, written out.
void reference_step(double& w, double& m, double g) {
  const double d = g + kDecay * w;
  m = kMomentum * m + d;
  w -= kLr * m;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (std::int64_t i = 0; i < t.numel(); ++i) v[i] = element(t, i);
  return v;
}

TEST(CpuSgd, DenseUpdateMatchesPyTorchRuleOverThreeSteps) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor w = random_uniform({4, 5}, t, 1);
    Tensor m = Tensor::host({4, 5}, t);
    backend.fill(m, 0.0);
    std::vector<double> rw = values(w), rm(20, 0.0);
    for (int step = 0; step < 3; ++step) {
      const Tensor g = random_uniform({4, 5}, t, 10 + step);
      backend.sgd_update(w, g, m, kLr, kMomentum, kDecay, {});
      for (std::int64_t i = 0; i < 20; ++i) reference_step(rw[i], rm[i], element(g, i));
    }
    for (std::int64_t i = 0; i < 20; ++i) {
      EXPECT_NEAR(element(w, i), rw[i], 1e-6) << dtype_name(t) << " element " << i;
      EXPECT_NEAR(element(m, i), rm[i], 1e-6) << dtype_name(t) << " element " << i;
    }
  }
}

TEST(CpuSgd, RowUpdateTouchesOnlySampledRows) {
  CpuBackend backend;
  const std::int64_t rows = 7, dim = 3;
  Tensor w = random_uniform({rows, dim}, DType::f32, 2);
  Tensor m = random_uniform({rows, dim}, DType::f32, 3);
  std::vector<double> rw = values(w), rm = values(m);
  const std::vector<std::int64_t> sampled = {5, 1, 2};
  Tensor index = Tensor::host({3}, DType::i64);
  std::copy(sampled.begin(), sampled.end(), index.data<std::int64_t>());
  for (int step = 0; step < 2; ++step) {
    const Tensor g = random_uniform({3, dim}, DType::f32, 20 + step);
    backend.sgd_update_rows(w, m, index, g, kLr, kMomentum, kDecay, {});
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < dim; ++j) {
        const std::int64_t k = sampled[i] * dim + j;
        reference_step(rw[k], rm[k], element(g, i * dim + j));
      }
  }
  for (std::int64_t k = 0; k < rows * dim; ++k) {
    const bool is_sampled = std::find(sampled.begin(), sampled.end(), k / dim) != sampled.end();
    if (is_sampled) {
      EXPECT_NEAR(element(w, k), rw[k], 1e-6) << "element " << k;
      EXPECT_NEAR(element(m, k), rm[k], 1e-6) << "element " << k;
    } else {
      EXPECT_EQ(element(w, k), rw[k]) << "unsampled element " << k << " changed";
      EXPECT_EQ(element(m, k), rm[k]) << "unsampled momentum " << k << " changed";
    }
  }
}

TEST(CpuSgd, RowUpdateChecksIndexAndGradientShape) {
  CpuBackend backend;
  Tensor w = random_uniform({4, 2}, DType::f32, 4), m = random_uniform({4, 2}, DType::f32, 5);
  Tensor index = Tensor::host({2}, DType::i64);
  index.data<std::int64_t>()[0] = 0;
  index.data<std::int64_t>()[1] = 4;
  const Tensor g = random_uniform({2, 2}, DType::f32, 6);
  EXPECT_THROW(backend.sgd_update_rows(w, m, index, g, kLr, kMomentum, kDecay, {}), Error);
  index.data<std::int64_t>()[1] = 3;
  const Tensor g_bad = random_uniform({3, 2}, DType::f32, 7);
  EXPECT_THROW(backend.sgd_update_rows(w, m, index, g_bad, kLr, kMomentum, kDecay, {}), Error);
}

}  // namespace
}  // namespace pfc
