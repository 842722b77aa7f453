// CpuBackend AdamW against torch.optim.AdamW's update written out in double over three steps
// (bias corrections of t = 1, 2, 3), dense and on sampled rows (other rows and both of their
// moments untouched), in f32 and f64; and the operand checks.
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

AdamWParams params(std::int64_t step) {
  AdamWParams p;
  p.lr = 0.01;
  p.weight_decay = 0.1;
  p.step = step;
  return p;
}

// torch.optim.AdamW (amsgrad off) on one element, in double.
void reference_step(double& w, double& m, double& v, double g, const AdamWParams& p) {
  w *= 1.0 - p.lr * p.weight_decay;
  m = p.beta1 * m + (1.0 - p.beta1) * g;
  v = p.beta2 * v + (1.0 - p.beta2) * g * g;
  const double t = static_cast<double>(p.step);
  const double bias1 = 1.0 - std::pow(p.beta1, t), bias2 = 1.0 - std::pow(p.beta2, t);
  w -= p.lr / bias1 * m / (std::sqrt(v) / std::sqrt(bias2) + p.eps);
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = element(t, i);
  return v;
}

Tensor zeros_like(CpuBackend& backend, const Tensor& t) {
  Tensor z = Tensor::host(t.shape(), t.dtype());
  backend.fill(z, 0.0);
  return z;
}

TEST(CpuAdamW, DenseUpdateMatchesPyTorchRuleOverThreeSteps) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    const double tol = t == DType::f32 ? 1e-6 : 1e-14;
    Tensor w = random_uniform({4, 5}, t, 1);
    Tensor m = zeros_like(backend, w), v = zeros_like(backend, w);
    std::vector<double> rw = values(w), rm(20, 0.0), rv(20, 0.0);
    for (std::int64_t step = 1; step <= 3; ++step) {
      // Small gradients too, where eps and the bias correction matter.
      const double scale = step == 2 ? 1e-6 : 1.0;
      const Tensor g = random_uniform({4, 5}, t, 10 + static_cast<std::uint64_t>(step),
                                      -scale, scale);
      backend.adamw_update(w, g, m, v, params(step), {});
      for (std::size_t i = 0; i < 20; ++i)
        reference_step(rw[i], rm[i], rv[i], element(g, static_cast<std::int64_t>(i)),
                       params(step));
    }
    for (std::int64_t i = 0; i < 20; ++i) {
      const auto k = static_cast<std::size_t>(i);
      EXPECT_NEAR(element(w, i), rw[k], tol * std::max(1.0, std::fabs(rw[k])))
          << dtype_name(t) << " w " << i;
      EXPECT_NEAR(element(m, i), rm[k], tol) << dtype_name(t) << " m " << i;
      EXPECT_NEAR(element(v, i), rv[k], tol) << dtype_name(t) << " v " << i;
    }
  }
}

TEST(CpuAdamW, RowUpdateTouchesOnlySampledRows) {
  CpuBackend backend;
  const std::int64_t rows = 7, dim = 3;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor w = random_uniform({rows, dim}, t, 2);
    Tensor m = random_uniform({rows, dim}, t, 3);
    Tensor v = random_uniform({rows, dim}, t, 4, 0.0, 1.0);
    std::vector<double> rw = values(w), rm = values(m), rv = values(v);
    const std::vector<std::int64_t> sampled = {5, 1, 2};
    Tensor index = Tensor::host({3}, DType::i64);
    std::copy(sampled.begin(), sampled.end(), index.data<std::int64_t>());
    for (std::int64_t step = 1; step <= 2; ++step) {
      const Tensor g = random_uniform({3, dim}, t, 20 + static_cast<std::uint64_t>(step));
      backend.adamw_update_rows(w, m, v, index, g, params(step), {});
      for (std::size_t i = 0; i < sampled.size(); ++i)
        for (std::int64_t j = 0; j < dim; ++j) {
          const auto k = static_cast<std::size_t>(sampled[i] * dim + j);
          reference_step(rw[k], rm[k], rv[k], element(g, static_cast<std::int64_t>(i) * dim + j),
                         params(step));
        }
    }
    for (std::int64_t i = 0; i < rows * dim; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const bool is_sampled =
          std::find(sampled.begin(), sampled.end(), i / dim) != sampled.end();
      if (is_sampled) {
        EXPECT_NEAR(element(w, i), rw[k], 1e-6) << "element " << i;
        EXPECT_NEAR(element(m, i), rm[k], 1e-6) << "element " << i;
        EXPECT_NEAR(element(v, i), rv[k], 1e-6) << "element " << i;
      } else {
        EXPECT_EQ(element(w, i), rw[k]) << "unsampled element " << i << " changed";
        EXPECT_EQ(element(m, i), rm[k]) << "unsampled first moment " << i << " changed";
        EXPECT_EQ(element(v, i), rv[k]) << "unsampled second moment " << i << " changed";
      }
    }
  }
}

TEST(CpuAdamW, ChecksOperandsAndStep) {
  CpuBackend backend;
  Tensor w = random_uniform({4, 2}, DType::f32, 4);
  Tensor m = zeros_like(backend, w), v = zeros_like(backend, w);
  const Tensor g = random_uniform({4, 2}, DType::f32, 5);
  EXPECT_THROW(backend.adamw_update(w, g, m, v, params(0), {}), Error);  // t starts at 1
  Tensor v_f64 = Tensor::host({4, 2}, DType::f64);
  EXPECT_THROW(backend.adamw_update(w, g, m, v_f64, params(1), {}), Error);
  Tensor index = Tensor::host({2}, DType::i64);
  index.data<std::int64_t>()[0] = 0;
  index.data<std::int64_t>()[1] = 4;
  const Tensor gr = random_uniform({2, 2}, DType::f32, 6);
  EXPECT_THROW(backend.adamw_update_rows(w, m, v, index, gr, params(1), {}), Error);
  index.data<std::int64_t>()[1] = 3;
  const Tensor gr_bad = random_uniform({3, 2}, DType::f32, 7);
  EXPECT_THROW(backend.adamw_update_rows(w, m, v, index, gr_bad, params(1), {}), Error);
}

}  // namespace
}  // namespace pfc
