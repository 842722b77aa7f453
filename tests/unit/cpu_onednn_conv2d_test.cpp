// The CPU backend's f32 convolutions on oneDNN against its reference loops (the f64 path):
// forward, backward-data and backward-filter, plain, strided, 1x1, grouped and depthwise, at
// the sizes of iresnet's and MobileFaceNet's layers; that oneDNN really ran them, that its
// workspace came from the backend's allocator as `workspace` (what a plan counts), and that a
// second call of a cached shape computes the same bits; planes too large for oneDNN go to the
// reference. bf16 operands (fp16 training), on oneDNN and on the reference backend, against the
// exact products of the same bf16 values. Skipped in a build without oneDNN.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;
using test::to_f64;

// One direction's output: forward (a = x, b = w), backward data (a = dy, b = w), backward
// filter (a = x, b = dy), in a's element type (f32 for bf16 operands).
Tensor run(CpuBackend& backend, const Conv2dGeometry& g, cpu::ConvDirection d, const Tensor& a,
           const Tensor& b) {
  const DType out = a.dtype() == DType::bf16 ? DType::f32 : a.dtype();
  switch (d) {
    case cpu::ConvDirection::forward: {
      Tensor y = Tensor::host(g.output_shape(), out);
      backend.conv2d_forward(g, a, b, y);
      return y;
    }
    case cpu::ConvDirection::backward_data: {
      Tensor dx = Tensor::host(g.input_shape(), out);
      backend.conv2d_backward_data(g, a, b, dx);
      return dx;
    }
    case cpu::ConvDirection::backward_filter:
      break;
  }
  Tensor dw = Tensor::host(g.filter_shape(), out);
  backend.conv2d_backward_filter(g, a, b, dw);
  return dw;
}

// x rounded to nearest even bf16, and those values exactly in f64.
struct Bf16Operand {
  Tensor bf16, exact;
};
Bf16Operand bf16_operand(CpuBackend& backend, const Tensor& x) {
  Bf16Operand o{Tensor::host(x.shape(), DType::bf16), Tensor::host(x.shape(), DType::f64)};
  backend.cast(x, o.bf16);
  backend.cast(o.bf16, o.exact);
  return o;
}

class OneDnnConv2d : public ::testing::TestWithParam<Conv2dGeometry> {
 protected:
  void SetUp() override {
    if (!cpu::onednn_built()) GTEST_SKIP() << "built without oneDNN";
  }
  CpuBackend backend;
};

TEST_P(OneDnnConv2d, EqualsTheReferenceInValuesAndGradients) {
  const Conv2dGeometry g = GetParam();
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 11);
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 12, -0.2, 0.2);
  const Tensor dy = random_uniform(g.output_shape(), DType::f32, 13);
  for (cpu::ConvDirection d : {cpu::ConvDirection::forward, cpu::ConvDirection::backward_data,
                               cpu::ConvDirection::backward_filter}) {
    const char* name = cpu::conv_direction_name(d);
    ASSERT_TRUE(cpu::onednn_conv2d_workspace_bytes(g, d).has_value())
        << "oneDNN leaves " << name << " to the reference";
    const Tensor& a = d == cpu::ConvDirection::backward_data ? dy : x;
    const Tensor& b = d == cpu::ConvDirection::backward_filter ? dy : w;
    const Tensor fast = run(backend, g, d, a, b);
    const Tensor exact = run(backend, g, d, to_f64(a), to_f64(b));
    // A filter gradient sums batch x output pixels products: f32 accumulation over 25 000 of
    // them for the stem.
    EXPECT_LT(test::relative_l2(fast, exact),
              d == cpu::ConvDirection::backward_filter ? 1e-5 : 1e-6)
        << name;
    // The cached primitive again: the same bits.
    const Tensor again = run(backend, g, d, a, b);
    EXPECT_EQ(std::memcmp(fast.raw(), again.raw(), fast.bytes()), 0) << name;
  }
}

// bf16 operands: each product is exact in f32, so oneDNN's bf16 kernels (where the CPU has
// them), and the reference backend's f32 arithmetic on the widened operands, differ from the
// exact sums of the same products by f32 accumulation alone.
TEST_P(OneDnnConv2d, Bf16OperandsGiveTheirExactProductsAccumulatedInF32) {
  const Conv2dGeometry g = GetParam();
  const Bf16Operand x = bf16_operand(backend, random_uniform(g.input_shape(), DType::f32, 21));
  const Bf16Operand w =
      bf16_operand(backend, random_uniform(g.filter_shape(), DType::f32, 22, -0.2, 0.2));
  const Bf16Operand dy = bf16_operand(backend, random_uniform(g.output_shape(), DType::f32, 23));
  CpuBackend reference(CpuConvolutions::reference);
  for (cpu::ConvDirection d : {cpu::ConvDirection::forward, cpu::ConvDirection::backward_data,
                               cpu::ConvDirection::backward_filter}) {
    const char* name = cpu::conv_direction_name(d);
    if (cpu::onednn_bf16_native())
      EXPECT_TRUE(cpu::onednn_conv2d_workspace_bytes(g, d, DType::bf16).has_value())
          << "oneDNN leaves bf16 " << name << " to the widened reference";
    const Bf16Operand& a = d == cpu::ConvDirection::backward_data ? dy : x;
    const Bf16Operand& b = d == cpu::ConvDirection::backward_filter ? dy : w;
    const Tensor exact = run(backend, g, d, a.exact, b.exact);
    const double tolerance = d == cpu::ConvDirection::backward_filter ? 1e-5 : 1e-6;
    EXPECT_LT(test::relative_l2(run(backend, g, d, a.bf16, b.bf16), exact), tolerance) << name;
    EXPECT_LT(test::relative_l2(run(reference, g, d, a.bf16, b.bf16), exact), tolerance)
        << name << " on the reference";
  }
}

TEST_P(OneDnnConv2d, TakesItsWorkspaceFromTheBackendsAllocator) {
  const Conv2dGeometry g = GetParam();
  const std::int64_t expected =
      conv2d_workspace_bytes(g, DType::f32, cpu::ConvDirection::forward);
  ASSERT_GE(expected, 0);
  EXPECT_EQ(conv2d_host_scratch_bytes(g, DType::f32, cpu::ConvDirection::forward), 0);
  Tensor x = backend.zeros(g.input_shape(), DType::f32, MemoryPurpose::activations);
  Tensor w = backend.zeros(g.filter_shape(), DType::f32, MemoryPurpose::weights);
  Tensor y = backend.empty(g.output_shape(), DType::f32, MemoryPurpose::activations);
  backend.allocator().ledger().reset_peak();
  backend.conv2d_forward(g, x, w, y);
  const MemorySnapshot s = backend.allocator().ledger().snapshot();
  const auto workspace = static_cast<std::size_t>(MemoryPurpose::workspace);
  EXPECT_EQ(s.peak_by_purpose[workspace], expected);
  EXPECT_EQ(s.in_use[workspace], 0);
}

INSTANTIATE_TEST_SUITE_P(
    Layers, OneDnnConv2d,
    ::testing::Values(
        // iresnet stem
        Conv2dGeometry{.batch = 2, .in_h = 112, .in_w = 112, .in_channels = 3,
                       .out_channels = 64, .kernel = 3, .stride = 1, .pad = 1, .groups = 1},
        // a block's first conv
        Conv2dGeometry{.batch = 2, .in_h = 28, .in_w = 28, .in_channels = 64,
                       .out_channels = 64, .kernel = 3, .stride = 1, .pad = 1, .groups = 1},
        // a stage's strided conv
        Conv2dGeometry{.batch = 2, .in_h = 28, .in_w = 28, .in_channels = 64,
                       .out_channels = 128, .kernel = 3, .stride = 2, .pad = 1, .groups = 1},
        // its shortcut
        Conv2dGeometry{.batch = 2, .in_h = 28, .in_w = 28, .in_channels = 64,
                       .out_channels = 128, .kernel = 1, .stride = 2, .pad = 0, .groups = 1},
        // channels of no vector width
        Conv2dGeometry{.batch = 3, .in_h = 7, .in_w = 7, .in_channels = 12,
                       .out_channels = 20, .kernel = 3, .stride = 1, .pad = 1, .groups = 1},
        // odd size, stride 2
        Conv2dGeometry{.batch = 2, .in_h = 9, .in_w = 9, .in_channels = 5,
                       .out_channels = 7, .kernel = 3, .stride = 2, .pad = 1, .groups = 1},
        // depthwise s2 (mbf)
        Conv2dGeometry{.batch = 2, .in_h = 28, .in_w = 28, .in_channels = 64,
                       .out_channels = 64, .kernel = 3, .stride = 2, .pad = 1, .groups = 64},
        // depthwise s1
        Conv2dGeometry{.batch = 2, .in_h = 14, .in_w = 14, .in_channels = 128,
                       .out_channels = 128, .kernel = 3, .stride = 1, .pad = 1, .groups = 128},
        // depthwise 7x7 (GDC)
        Conv2dGeometry{.batch = 2, .in_h = 7, .in_w = 7, .in_channels = 64,
                       .out_channels = 64, .kernel = 7, .stride = 1, .pad = 0, .groups = 64},
        // pointwise
        Conv2dGeometry{.batch = 2, .in_h = 14, .in_w = 14, .in_channels = 64,
                       .out_channels = 128, .kernel = 1, .stride = 1, .pad = 0, .groups = 1},
        // 4 groups of 3 -> 2
        Conv2dGeometry{.batch = 2, .in_h = 10, .in_w = 10, .in_channels = 12,
                       .out_channels = 8, .kernel = 3, .stride = 1, .pad = 1, .groups = 4}),
    [](const ::testing::TestParamInfo<Conv2dGeometry>& info) {
      const Conv2dGeometry& g = info.param;
      return fmt::format("n{}_{}x{}_to{}_k{}s{}p{}g{}", g.batch, g.in_h, g.in_channels,
                         g.out_channels, g.kernel, g.stride, g.pad, g.groups);
    });

// oneDNN counts a plane's pixels in 32 bits: a plane of 2^32 (image_size = 65536) made its
// set-up divide by zero. Such shapes are left to the reference, in every direction.
TEST(OneDnnConv2dLimits, PlanesOf2To31PixelsOrMoreGoToTheReference) {
  if (!cpu::onednn_built()) GTEST_SKIP() << "built without oneDNN";
  const Conv2dGeometry g{.batch = 1, .in_h = 65536, .in_w = 65536, .in_channels = 16,
                         .out_channels = 16, .kernel = 3, .stride = 1, .pad = 1, .groups = 1};
  for (const auto d : {cpu::ConvDirection::forward, cpu::ConvDirection::backward_data,
                       cpu::ConvDirection::backward_filter})
    EXPECT_FALSE(cpu::onednn_conv2d_workspace_bytes(g, d).has_value())
        << cpu::conv_direction_name(d);
}

}  // namespace
}  // namespace pfc
