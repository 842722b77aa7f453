// CpuBackend row softmax (attention's scores) against its definition, in place too, and its
// backward against finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

Tensor definition(const Tensor& x) {
  const std::int64_t width = x.shape().back(), rows = x.numel() / width;
  Tensor y = Tensor::host(x.shape(), DType::f64);
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < width; ++c) sum += std::exp(element(x, r * width + c));
    for (std::int64_t c = 0; c < width; ++c)
      y.data<double>()[r * width + c] = std::exp(element(x, r * width + c)) / sum;
  }
  return y;
}

TEST(CpuSoftmaxRows, ForwardMatchesDefinitionInPlaceAndNot) {
  CpuBackend backend;
  for (const DType dtype : {DType::f32, DType::f64}) {
    // Large logits: the row maximum keeps the exponentials finite.
    const Tensor x = random_uniform({3, 4, 11}, dtype, 1, -50.0, 50.0);
    const Tensor want = definition(x);
    Tensor y = Tensor::host(x.shape(), dtype);
    backend.softmax_rows_forward(x, y);
    const double tol = dtype == DType::f32 ? 1e-6 : 1e-14;
    test::expect_tensors_near(y, want, tol, tol, "y");
    Tensor in_place = Tensor::host(x.shape(), dtype);
    backend.copy(x, in_place);
    backend.softmax_rows_forward(in_place, in_place);
    test::expect_tensors_near(in_place, want, tol, tol, "y in place");
  }
}

TEST(CpuSoftmaxRows, GradientMatchesFiniteDifferences) {
  CpuBackend backend;
  test::check_gradients(
      {{"x", random_uniform({6, 8}, DType::f64, 2, -3.0, 3.0)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.softmax_rows_forward(in[0], y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.softmax_rows_forward(in[0], y);
        // In place on a copy of the output gradient.
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        backend.copy(dout[0], dx);
        backend.softmax_rows_backward(dx, y, dx);
        return std::vector<Tensor>{dx};
      });
}

TEST(CpuSoftmaxRows, RejectsOutputOfAnotherShape) {
  CpuBackend backend;
  const Tensor x = random_uniform({4, 3}, DType::f32, 1);
  Tensor y = Tensor::host({3, 4}, DType::f32);
  EXPECT_THROW(backend.softmax_rows_forward(x, y), Error);
}

}  // namespace
}  // namespace pfc
