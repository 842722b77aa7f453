// The CPU backend's fused inference convolution (one oneDNN primitive with bias, PReLU, ReLU6
// and the residual sum as post-ops) against Backend's reference passes, in f32 and with a bf16
// filter, for plain, strided, 1x1, depthwise and whole-map (a Linear's) shapes, with every
// epilogue; and with bf16 activations read and written beside a bf16 filter.
// Skipped in a build without oneDNN (the backend then runs the reference itself).
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;

Conv2dGeometry geometry(std::int64_t size, std::int64_t in, std::int64_t out, std::int64_t kernel,
                        std::int64_t stride, std::int64_t pad, std::int64_t groups) {
  Conv2dGeometry g;
  g.batch = 2;
  g.in_h = g.in_w = size;
  g.in_channels = in;
  g.out_channels = out;
  g.kernel = kernel;
  g.stride = stride;
  g.pad = pad;
  g.groups = groups;
  return g;
}

struct Epilogue {
  bool bias, prelu, accumulate, relu6 = false;
};

void expect_fused_matches_reference(const Conv2dGeometry& g, const Epilogue& e, bool bf16) {
  CpuBackend backend;
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  Tensor w = random_uniform(g.filter_shape(), DType::f32, 2, -0.2, 0.2);
  if (bf16) {
    Tensor rounded = Tensor::host(g.filter_shape(), DType::bf16);
    backend.cast(w, rounded);
    w = rounded;
  }
  const Tensor bias = random_uniform({g.out_channels}, DType::f32, 3);
  const Tensor slope = random_uniform({g.out_channels}, DType::f32, 4, 0.0, 0.5);
  const Tensor residual = random_uniform(g.output_shape(), DType::f32, 5);
  ConvEpilogue epilogue;
  if (e.bias) epilogue.bias = &bias;
  if (e.prelu) epilogue.prelu_slope = &slope;
  epilogue.relu6 = e.relu6;
  epilogue.accumulate = e.accumulate;
  Tensor fused = Tensor::host(g.output_shape(), DType::f32);
  Tensor reference = Tensor::host(g.output_shape(), DType::f32);
  if (e.accumulate) {
    backend.copy(residual, fused);
    backend.copy(residual, reference);
  }
  backend.conv2d_forward_fused(g, x, w, epilogue, fused);
  backend.Backend::conv2d_forward_fused(g, x, w, epilogue, reference);
  // Both accumulate in f32 (the reference's bf16 operands are exact in f32): they differ only
  // in the order of the sums.
  test::expect_tensors_near(fused, reference, 1e-5, 1e-5, "fused convolution");
}

class CpuFusedConv2d : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (!cpu::onednn_built()) GTEST_SKIP() << "built without oneDNN";
    if (GetParam() && !cpu::onednn_bf16_native())
      GTEST_SKIP() << "no bf16 instructions on this CPU";
  }
};

TEST_P(CpuFusedConv2d, EveryEpilogueMatchesTheReferencePasses) {
  const Conv2dGeometry g = geometry(10, 32, 48, 3, 1, 1, 1);
  for (const Epilogue& e : {Epilogue{false, false, false}, Epilogue{true, false, false},
                            Epilogue{true, true, false}, Epilogue{true, false, true},
                            Epilogue{true, true, true}, Epilogue{false, true, true},
                            Epilogue{true, false, false, true}, Epilogue{true, true, true, true}}) {
    SCOPED_TRACE(testing::Message() << "bias " << e.bias << " prelu " << e.prelu << " relu6 "
                                    << e.relu6 << " accumulate " << e.accumulate);
    expect_fused_matches_reference(g, e, GetParam());
  }
}

TEST_P(CpuFusedConv2d, NetworkShapesMatchTheReferencePasses) {
  const Epilogue all{true, true, false};
  expect_fused_matches_reference(geometry(14, 32, 32, 3, 2, 1, 1), all, GetParam());  // strided
  expect_fused_matches_reference(geometry(14, 32, 64, 1, 2, 0, 1), {true, false, true},
                                 GetParam());  // a downsampling shortcut
  expect_fused_matches_reference(geometry(9, 32, 32, 3, 1, 1, 32), all, GetParam());  // depthwise
  expect_fused_matches_reference(geometry(7, 64, 48, 7, 1, 0, 1), {true, false, false},
                                 GetParam());  // a Linear over a 7x7 map
}

// An inference network keeps a value in bf16 when only bf16 products read it: the convolution
// then reads a bf16 x, or writes a bf16 y, where it would otherwise round x itself and write
// f32. Each way gives the f32-output convolution's values, rounded once to bf16 for a bf16 y.
TEST(CpuFusedConv2dBf16Values, ReadAndWriteBf16AsTheF32OutputRounded) {
  if (!cpu::onednn_built()) GTEST_SKIP() << "built without oneDNN";
  if (!cpu::onednn_bf16_native()) GTEST_SKIP() << "no bf16 instructions on this CPU";
  CpuBackend backend;
  auto to = [&](const Tensor& t, DType type) {
    Tensor out = Tensor::host(t.shape(), type);
    backend.cast(t, out);
    return out;
  };
  const Tensor bias = random_uniform({48}, DType::f32, 3);
  const Tensor slope = random_uniform({48}, DType::f32, 4, 0.0, 0.5);
  for (const Conv2dGeometry& g :
       {geometry(10, 32, 48, 3, 1, 1, 1), geometry(12, 64, 48, 1, 1, 0, 1)}) {
    const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
    const Tensor x16 = to(x, DType::bf16);
    const Tensor w = to(random_uniform(g.filter_shape(), DType::f32, 2, -0.2, 0.2), DType::bf16);
    // ReLU6 is a post-op of oneDNN's bf16 kernels; PReLU runs as a pass after them.
    for (const Epilogue& e : {Epilogue{true, false, false, true}, Epilogue{true, true, false}}) {
      SCOPED_TRACE(testing::Message() << "kernel " << g.kernel << " prelu " << e.prelu);
      ConvEpilogue epilogue;
      epilogue.bias = &bias;
      if (e.prelu) epilogue.prelu_slope = &slope;
      epilogue.relu6 = e.relu6;
      Tensor f32_out = Tensor::host(g.output_shape(), DType::f32);
      backend.conv2d_forward_fused(g, x, w, epilogue, f32_out);
      const Tensor rounded = to(to(f32_out, DType::bf16), DType::f32);
      Tensor from_bf16 = Tensor::host(g.output_shape(), DType::f32);
      backend.conv2d_forward_fused(g, x16, w, epilogue, from_bf16);
      test::expect_tensors_near(from_bf16, f32_out, 1e-6, 1e-6, "bf16 x, f32 y");
      for (const Tensor* input : {&x, &x16}) {
        Tensor y16 = Tensor::host(g.output_shape(), DType::bf16);
        backend.conv2d_forward_fused(g, *input, w, epilogue, y16);
        // The same rounding of sums that may differ in their last f32 bit: at most one step.
        test::expect_tensors_near(to(y16, DType::f32), rounded, 1.0 / 128, 1e-6, "bf16 y");
        Tensor reference = Tensor::host(g.output_shape(), DType::bf16);
        backend.Backend::conv2d_forward_fused(g, *input, w, epilogue, reference);
        test::expect_tensors_near(to(reference, DType::f32), rounded, 1.0 / 128, 1e-6,
                                  "the reference's bf16 y");
      }
    }
  }
}

TEST(CpuFusedConv2dBf16Values, NoBf16YToSumInto) {
  CpuBackend backend;
  const Conv2dGeometry g = geometry(6, 16, 16, 3, 1, 1, 1);
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  Tensor w = Tensor::host(g.filter_shape(), DType::bf16);
  backend.cast(random_uniform(g.filter_shape(), DType::f32, 2), w);
  Tensor y = Tensor::host(g.output_shape(), DType::bf16);
  ConvEpilogue sum;
  sum.accumulate = true;
  try {
    backend.conv2d_forward_fused(g, x, w, sum, y);
    FAIL() << "a bf16 y was summed into";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sums into f32 y only"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Operands, CpuFusedConv2d, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "bf16" : "f32"; });

TEST(CpuFusedConv2dChecks, NamesABadBiasAndAnF64Input) {
  CpuBackend backend;
  const Conv2dGeometry g = geometry(6, 16, 16, 3, 1, 1, 1);
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 2);
  const Tensor short_bias = random_uniform({8}, DType::f32, 3);
  Tensor y = Tensor::host(g.output_shape(), DType::f32);
  ConvEpilogue epilogue;
  epilogue.bias = &short_bias;
  try {
    backend.conv2d_forward_fused(g, x, w, epilogue, y);
    FAIL() << "a bias of 8 channels for 16 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bias"), std::string::npos) << e.what();
  }
  Tensor wb = Tensor::host(g.filter_shape(), DType::bf16);
  backend.cast(w, wb);
  const Tensor x64 = random_uniform(g.input_shape(), DType::f64, 1);
  Tensor y64 = Tensor::host(g.output_shape(), DType::f64);
  EXPECT_THROW(backend.conv2d_forward_fused(g, x64, wb, {}, y64), Error);
}

}  // namespace
}  // namespace pfc
