// CpuBackend per-sample scaling (DropPath: kept samples divided by the keep probability,
// dropped ones zeroed) against its definition, in place too, and its gradient.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

TEST(CpuScaleSamples, EachSampleTakesItsFactor) {
  CpuBackend backend;
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Tensor x = random_uniform({3, 4, 5}, dtype, 1);
    Tensor factor = Tensor::host({3}, DType::f32);
    const float factors[3] = {1.0f / 0.9f, 0.0f, 1.0f / 0.9f};
    for (int s = 0; s < 3; ++s) factor.data<float>()[s] = factors[s];
    Tensor y = Tensor::host(x.shape(), dtype);
    backend.scale_samples(x, factor, y);
    for (std::int64_t i = 0; i < x.numel(); ++i)
      EXPECT_EQ(element(y, i), dtype == DType::f32
                                   ? static_cast<double>(factors[i / 20] * static_cast<float>(element(x, i)))
                                   : static_cast<double>(factors[i / 20]) * element(x, i))
          << i;
    Tensor in_place = Tensor::host(x.shape(), dtype);
    backend.copy(x, in_place);
    backend.scale_samples(in_place, factor, in_place);
    test::expect_tensors_near(in_place, y, 0, 0, "in place");
  }
}

TEST(CpuScaleSamples, GradientMatchesFiniteDifferences) {
  CpuBackend backend;
  const Tensor factor = random_uniform({4}, DType::f64, 2, 0.0, 2.0);
  test::check_gradients(
      {{"x", random_uniform({4, 6}, DType::f64, 3)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(in[0].shape(), DType::f64);
        backend.scale_samples(in[0], factor, y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor dx = Tensor::host(in[0].shape(), DType::f64);
        backend.scale_samples(dout[0], factor, dx);
        return std::vector<Tensor>{dx};
      });
}

TEST(CpuScaleSamples, RejectsOneFactorTooFew) {
  CpuBackend backend;
  const Tensor x = random_uniform({3, 2}, DType::f32, 1);
  const Tensor factor = random_uniform({2}, DType::f32, 2);
  Tensor y = Tensor::host({3, 2}, DType::f32);
  EXPECT_THROW(backend.scale_samples(x, factor, y), Error);
}

}  // namespace
}  // namespace pfc
