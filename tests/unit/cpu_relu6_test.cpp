// CpuBackend ReLU6 (the ViT MLP's activation) against its definition, and its backward against
// finite differences with inputs kept off the kinks at 0 and 6.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// Uniform in [-3, 9] moved at least 0.05 away from 0 and 6.
Tensor off_kinks(const Shape& shape, std::uint64_t seed) {
  Tensor t = random_uniform(shape, DType::f64, seed, -3.0, 9.0);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    for (const double kink : {0.0, 6.0})
      if (std::abs(p[i] - kink) < 0.05) p[i] = kink + (p[i] < kink ? -0.05 : 0.05);
  return t;
}

TEST(CpuRelu6, ForwardClampsAndBackwardPassesInsideOnly) {
  CpuBackend backend;
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Tensor x = random_uniform({5, 7}, dtype, 1, -3.0, 9.0);
    const Tensor dy = random_uniform({5, 7}, dtype, 2);
    Tensor y = Tensor::host(x.shape(), dtype), dx = Tensor::host(x.shape(), dtype);
    backend.relu6_forward(x, y);
    backend.relu6_backward(dy, y, dx);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const double v = element(x, i);
      EXPECT_EQ(element(y, i), std::min(std::max(v, 0.0), 6.0)) << i;
      EXPECT_EQ(element(dx, i), v > 0 && v < 6 ? element(dy, i) : 0.0) << i;
    }
  }
}

TEST(CpuRelu6, AtTheKinksTheGradientIsZeroAsTorchs) {
  CpuBackend backend;
  Tensor x = Tensor::host({4}, DType::f64);
  const double values[4] = {0.0, 6.0, 3.0, -1.0};
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = values[i];
  Tensor y = Tensor::host({4}, DType::f64), dx = Tensor::host({4}, DType::f64);
  backend.relu6_forward(x, y);
  backend.fill(dx, 1.0);
  backend.relu6_backward(dx, y, dx);
  EXPECT_EQ(element(dx, 0), 0.0);
  EXPECT_EQ(element(dx, 1), 0.0);
  EXPECT_EQ(element(dx, 2), 1.0);
  EXPECT_EQ(element(dx, 3), 0.0);
}

TEST(CpuRelu6, GradientMatchesFiniteDifferences) {
  CpuBackend backend;
  test::check_gradients(
      {{"x", off_kinks({6, 9}, 3)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.relu6_forward(in[0], y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        // The forward in place, as the model runs it.
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.copy(in[0], y);
        backend.relu6_forward(y, y);
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        backend.relu6_backward(dout[0], y, dx);
        return std::vector<Tensor>{dx};
      });
}

}  // namespace
}  // namespace pfc
