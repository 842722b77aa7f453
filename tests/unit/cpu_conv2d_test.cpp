// CpuBackend convolution (NHWC, OHWI, grouped and depthwise too) against a direct seven-loop
// definition, its gradients against finite differences in f64, and the chunked large-batch
// path against single images.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// Calls f(x index, w index, y index) for every term x * w of the convolution sum whose
// input pixel lies inside the image (padding contributes nothing). Output channel o reads
// the in/groups input channels of its group, o / (out/groups), PyTorch's definition.
template <class F>
void for_each_term(const Conv2dGeometry& g, F&& f) {
  const std::int64_t oh = g.out_h(), ow = g.out_w(), k = g.kernel;
  const std::int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t oy = 0; oy < oh; ++oy)
      for (std::int64_t ox = 0; ox < ow; ++ox)
        for (std::int64_t o = 0; o < g.out_channels; ++o)
          for (std::int64_t ky = 0; ky < k; ++ky)
            for (std::int64_t kx = 0; kx < k; ++kx)
              for (std::int64_t c = 0; c < cg; ++c) {
                const std::int64_t iy = oy * g.stride - g.pad + ky;
                const std::int64_t ix = ox * g.stride - g.pad + kx;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                f(((n * g.in_h + iy) * g.in_w + ix) * g.in_channels + (o / og) * cg + c,
                  ((o * k + ky) * k + kx) * cg + c,
                  ((n * oh + oy) * ow + ox) * g.out_channels + o);
              }
}

Tensor zeros_f64(const Shape& shape) {
  Tensor t = Tensor::host(shape, DType::f64);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = 0.0;
  return t;
}

Tensor naive_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w) {
  Tensor y = zeros_f64(g.output_shape());
  double* py = y.data<double>();
  for_each_term(g, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    py[yi] += element(x, xi) * element(w, wi);
  });
  return y;
}

Tensor naive_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w) {
  Tensor dx = zeros_f64(g.input_shape());
  double* p = dx.data<double>();
  for_each_term(g, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    p[xi] += element(dy, yi) * element(w, wi);
  });
  return dx;
}

Tensor naive_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy) {
  Tensor dw = zeros_f64(g.filter_shape());
  double* p = dw.data<double>();
  for_each_term(g, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    p[wi] += element(x, xi) * element(dy, yi);
  });
  return dw;
}

Conv2dGeometry geometry(std::int64_t batch, std::int64_t h, std::int64_t w, std::int64_t cin,
                        std::int64_t cout, std::int64_t kernel, std::int64_t stride,
                        std::int64_t pad, std::int64_t groups = 1) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_h = h;
  g.in_w = w;
  g.in_channels = cin;
  g.out_channels = cout;
  g.kernel = kernel;
  g.stride = stride;
  g.pad = pad;
  g.groups = groups;
  return g;
}

class CpuConv2d : public ::testing::TestWithParam<Conv2dGeometry> {
 protected:
  CpuBackend backend;
};

TEST_P(CpuConv2d, ForwardAndBackwardMatchDirectLoopsInF32) {
  const Conv2dGeometry g = GetParam();
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 2);
  const Tensor dy = random_uniform(g.output_shape(), DType::f32, 3);

  Tensor y = backend.empty(g.output_shape(), DType::f32, MemoryPurpose::activations);
  backend.conv2d_forward(g, x, w, y);
  test::expect_tensors_near(y, naive_forward(g, x, w), 1e-5, 1e-5, "forward");

  Tensor dx = backend.empty(g.input_shape(), DType::f32, MemoryPurpose::activations);
  backend.conv2d_backward_data(g, dy, w, dx);
  test::expect_tensors_near(dx, naive_backward_data(g, dy, w), 1e-5, 1e-5, "backward data");

  Tensor dw = backend.empty(g.filter_shape(), DType::f32, MemoryPurpose::gradients);
  backend.conv2d_backward_filter(g, x, dy, dw);
  test::expect_tensors_near(dw, naive_backward_filter(g, x, dy), 1e-5, 1e-5, "backward filter");
}

TEST_P(CpuConv2d, GradientsMatchFiniteDifferences) {
  const Conv2dGeometry g = GetParam();
  test::check_gradients(
      {{"x", random_uniform(g.input_shape(), DType::f64, 4)},
       {"w", random_uniform(g.filter_shape(), DType::f64, 5)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host(g.output_shape(), DType::f64);
        backend.conv2d_forward(g, in[0], in[1], y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor dx = Tensor::host(g.input_shape(), DType::f64);
        Tensor dw = Tensor::host(g.filter_shape(), DType::f64);
        backend.conv2d_backward_data(g, dout[0], in[1], dx);
        backend.conv2d_backward_filter(g, in[0], dout[0], dw);
        return std::vector<Tensor>{dx, dw};
      });
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuConv2d,
    ::testing::Values(geometry(2, 7, 6, 5, 4, 3, 1, 1),   // 3x3 s1 pad 1, C not a multiple of 4
                      geometry(2, 7, 7, 3, 6, 3, 2, 1),   // 3x3 s2 pad 1, odd size
                      geometry(2, 8, 8, 4, 3, 3, 2, 1),   // 3x3 s2 pad 1, even (iresnet)
                      geometry(3, 6, 5, 7, 5, 1, 2, 0),   // 1x1 s2 pad 0 (shortcut)
                      geometry(2, 5, 4, 6, 3, 1, 1, 0),   // 1x1 s1: no im2col
                      geometry(1, 6, 5, 2, 3, 5, 1, 2),   // 5x5 pad 2
                      geometry(2, 8, 7, 3, 2, 3, 2, 0),   // 3x3 s2 no padding
                      geometry(2, 6, 7, 6, 4, 3, 1, 1, 2),  // 2 groups of 3 -> 2 channels
                      geometry(2, 6, 6, 4, 8, 3, 1, 1, 4),  // 4 groups of 1 -> 2 channels
                      geometry(2, 7, 6, 5, 5, 3, 2, 1, 5),  // depthwise 3x3 s2, odd height
                      geometry(2, 6, 6, 6, 6, 3, 2, 1, 6),  // depthwise 3x3 s2, even (mbf)
                      geometry(2, 7, 7, 6, 6, 7, 1, 0, 6),  // depthwise 7x7 to 1x1 (GDC)
                      geometry(3, 5, 4, 4, 6, 1, 1, 0, 2),  // grouped 1x1 s1: no im2col
                      geometry(2, 6, 5, 6, 3, 1, 2, 0, 3)), // grouped 1x1 s2
    [](const ::testing::TestParamInfo<Conv2dGeometry>& info) {
      const Conv2dGeometry& g = info.param;
      return fmt::format("n{}_{}x{}x{}_to{}_k{}s{}p{}g{}", g.batch, g.in_h, g.in_w, g.in_channels,
                         g.out_channels, g.kernel, g.stride, g.pad, g.groups);
    });

// Five 56x56x64 images need more im2col scratch than one chunk holds (8M elements, four of
// them), as do three depthwise 56x56x128 ones (two of them): the batched call must equal
// image-by-image calls (dw summed over images).
class CpuConv2dChunks : public ::testing::TestWithParam<Conv2dGeometry> {};

INSTANTIATE_TEST_SUITE_P(Shapes, CpuConv2dChunks,
                         ::testing::Values(geometry(5, 56, 56, 64, 8, 3, 1, 1),
                                           geometry(3, 56, 56, 128, 128, 3, 1, 1, 128)),
                         [](const ::testing::TestParamInfo<Conv2dGeometry>& info) {
                           return fmt::format("groups{}", info.param.groups);
                         });

TEST_P(CpuConv2dChunks, LargeBatchEqualsImageByImage) {
  CpuBackend backend;
  const Conv2dGeometry g = GetParam();
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 6);
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 7);
  const Tensor dy = random_uniform(g.output_shape(), DType::f32, 8);
  Tensor y = Tensor::host(g.output_shape(), DType::f32);
  Tensor dx = Tensor::host(g.input_shape(), DType::f32);
  Tensor dw = Tensor::host(g.filter_shape(), DType::f32);
  backend.conv2d_forward(g, x, w, y);
  backend.conv2d_backward_data(g, dy, w, dx);
  backend.conv2d_backward_filter(g, x, dy, dw);

  Conv2dGeometry one = g;
  one.batch = 1;
  Tensor dw_sum = zeros_f64(g.filter_shape());
  Tensor dw_one = Tensor::host(g.filter_shape(), DType::f32);
  for (std::int64_t n = 0; n < g.batch; ++n) {
    Tensor y_one = Tensor::host(one.output_shape(), DType::f32);
    Tensor dx_one = Tensor::host(one.input_shape(), DType::f32);
    backend.conv2d_forward(one, x.rows(n, n + 1), w, y_one);
    backend.conv2d_backward_data(one, dy.rows(n, n + 1), w, dx_one);
    backend.conv2d_backward_filter(one, x.rows(n, n + 1), dy.rows(n, n + 1), dw_one);
    test::expect_tensors_near(y.rows(n, n + 1), y_one, 1e-6, 1e-6, fmt::format("y image {}", n));
    test::expect_tensors_near(dx.rows(n, n + 1), dx_one, 1e-6, 1e-6, fmt::format("dx image {}", n));
    for (std::int64_t i = 0; i < dw_sum.numel(); ++i)
      dw_sum.data<double>()[i] += dw_one.data<float>()[i];
  }
  test::expect_tensors_near(dw, dw_sum, 1e-4, 1e-3, "dw summed over images");
}

TEST(CpuConv2dChecks, NamesTheOperandWithTheWrongShape) {
  CpuBackend backend;
  const Conv2dGeometry g = geometry(1, 4, 4, 3, 2, 3, 1, 1);
  Tensor x = Tensor::host(g.input_shape(), DType::f32);
  Tensor w = Tensor::host({2, 3, 3, 4}, DType::f32);
  Tensor y = Tensor::host(g.output_shape(), DType::f32);
  try {
    backend.conv2d_forward(g, x, w, y);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d_forward: w has shape"), std::string::npos)
        << e.what();
  }
  Tensor xi = Tensor::host(g.input_shape(), DType::i32);
  Tensor wi = Tensor::host(g.filter_shape(), DType::i32);
  Tensor yi = Tensor::host(g.output_shape(), DType::i32);
  EXPECT_THROW(backend.conv2d_forward(g, xi, wi, yi), Error);
}

TEST(CpuConv2dChecks, NamesGroupsThatDoNotDivideTheChannels) {
  CpuBackend backend;
  const Conv2dGeometry g = geometry(1, 4, 4, 6, 4, 3, 1, 1, 4);
  Tensor x = Tensor::host(g.input_shape(), DType::f32);
  Tensor w = Tensor::host({4, 3, 3, 1}, DType::f32);
  Tensor y = Tensor::host(g.output_shape(), DType::f32);
  try {
    backend.conv2d_forward(g, x, w, y);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 groups do not divide 6 input and 4 output channels"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pfc
