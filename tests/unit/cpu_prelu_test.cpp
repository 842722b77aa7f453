// CpuBackend PReLU (one slope per channel) against its definition, and its gradients (x,
// slope) against finite differences, with inputs kept off the kink at zero.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// Uniform values in [-1, 1] moved at least 0.05 away from zero, where PReLU has no derivative.
Tensor off_zero(const Shape& shape, std::uint64_t seed) {
  Tensor t = random_uniform(shape, DType::f64, seed);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (std::abs(p[i]) < 0.05) p[i] += p[i] < 0 ? -0.05 : 0.05;
  return t;
}

TEST(CpuPrelu, ForwardAndBackwardMatchDefinitionF32) {
  CpuBackend backend;
  const std::int64_t rows = 13, channels = 7;
  const Tensor x = random_uniform({rows, channels}, DType::f32, 1);
  const Tensor slope = random_uniform({channels}, DType::f32, 2, 0.0, 0.5);
  const Tensor dy = random_uniform({rows, channels}, DType::f32, 3);
  Tensor y = Tensor::host(x.shape(), DType::f32);
  Tensor dx = Tensor::host(x.shape(), DType::f32);
  Tensor dslope = Tensor::host({channels}, DType::f32);
  backend.prelu_forward(x, slope, y);
  backend.prelu_backward(dy, x, slope, dx, dslope);

  Tensor want_y = Tensor::host(x.shape(), DType::f64);
  Tensor want_dx = Tensor::host(x.shape(), DType::f64);
  Tensor want_dslope = Tensor::host({channels}, DType::f64);
  for (std::int64_t c = 0; c < channels; ++c) want_dslope.data<double>()[c] = 0.0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t i = r * channels + c;
      const double v = element(x, i), a = element(slope, c), g = element(dy, i);
      want_y.data<double>()[i] = v > 0 ? v : a * v;
      want_dx.data<double>()[i] = v > 0 ? g : a * g;
      if (v <= 0) want_dslope.data<double>()[c] += g * v;
    }
  test::expect_tensors_near(y, want_y, 1e-6, 1e-7, "y");
  test::expect_tensors_near(dx, want_dx, 1e-6, 1e-7, "dx");
  test::expect_tensors_near(dslope, want_dslope, 1e-5, 1e-6, "dslope");
}

TEST(CpuPrelu, GradientsMatchFiniteDifferences) {
  CpuBackend backend;
  const std::int64_t rows = 9, channels = 5;
  test::check_gradients(
      {{"x", off_zero({rows, channels}, 4)},
       {"slope", random_uniform({channels}, DType::f64, 5, 0.0, 0.5)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.prelu_forward(in[0], in[1], y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        Tensor dslope = Tensor::host({channels}, DType::f64);
        backend.prelu_backward(dout[0], in[0], in[1], dx, dslope);
        return std::vector<Tensor>{dx, dslope};
      });
}

TEST(CpuPrelu, RejectsSlopeOfWrongLength) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 3}, DType::f32, 1);
  const Tensor slope = random_uniform({4}, DType::f32, 2);
  Tensor y = Tensor::host({4, 3}, DType::f32);
  EXPECT_THROW(backend.prelu_forward(x, slope, y), Error);
}

}  // namespace
}  // namespace pfc
