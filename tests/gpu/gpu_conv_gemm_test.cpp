// cuDNN convolutions (forward, backward data, backward filter) and cuBLAS GEMMs against the
// CPU backend, in f32 (FMA math, no TF32: f32 rounding) and f16 (tensor cores).
#include <string>

#include "gpu_test_support.h"

namespace pfc::test {
namespace {

struct ConvCase {
  std::string name;
  Conv2dGeometry g;
  DType dtype;
};

class GpuConv : public ::testing::TestWithParam<ConvCase> {};

// r50's shapes in miniature: 3x3 stride 1 and 2, the 1x1 stride-2 shortcut, the 3-channel
// stem; and MobileFaceNet's grouped ones (cuDNN's group count): groups of 2 channels, the
// depthwise 3x3 stride 1 and 2, the 7x7 depthwise GDC head.
INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuConv,
    ::testing::Values(ConvCase{"k3s1_f32", conv_geometry(2, 9, 8, 16, 3, 1, 1), DType::f32},
                      ConvCase{"k3s2_f32", conv_geometry(2, 10, 16, 8, 3, 2, 1), DType::f32},
                      ConvCase{"k1s2_f32", conv_geometry(3, 8, 8, 16, 1, 2, 0), DType::f32},
                      ConvCase{"stem_f32", conv_geometry(2, 12, 3, 16, 3, 1, 1), DType::f32},
                      ConvCase{"g8_f32", conv_geometry(2, 9, 16, 16, 3, 1, 1, 8), DType::f32},
                      ConvCase{"dw_s1_f32", conv_geometry(2, 9, 32, 32, 3, 1, 1, 32), DType::f32},
                      ConvCase{"dw_s2_f32", conv_geometry(2, 10, 24, 24, 3, 2, 1, 24), DType::f32},
                      ConvCase{"gdc_f32", conv_geometry(3, 7, 64, 64, 7, 1, 0, 64), DType::f32},
                      ConvCase{"k3s1_f16", conv_geometry(2, 9, 8, 16, 3, 1, 1), DType::f16},
                      ConvCase{"k3s2_f16", conv_geometry(2, 10, 16, 8, 3, 2, 1), DType::f16},
                      ConvCase{"k1s2_f16", conv_geometry(3, 8, 8, 16, 1, 2, 0), DType::f16},
                      ConvCase{"stem_f16", conv_geometry(2, 12, 3, 16, 3, 1, 1), DType::f16},
                      ConvCase{"g8_f16", conv_geometry(2, 9, 16, 16, 3, 1, 1, 8), DType::f16},
                      ConvCase{"dw_s1_f16", conv_geometry(2, 9, 32, 32, 3, 1, 1, 32), DType::f16},
                      ConvCase{"dw_s2_f16", conv_geometry(2, 10, 24, 24, 3, 2, 1, 24), DType::f16},
                      ConvCase{"gdc_f16", conv_geometry(3, 7, 64, 64, 7, 1, 0, 64), DType::f16}),
    [](const auto& info) { return info.param.name; });

TEST_P(GpuConv, MatchesCpu) {
  PFC_REQUIRE_GPU();
  const auto& [name, g, dtype] = GetParam();
  Backend& gpu = gpu_backend();
  const double tol = tolerance(dtype);
  auto as_input = [&](const Tensor& t) { return dtype == DType::f16 ? round_to_half(t) : t; };
  const Tensor x = as_input(random_host(g.input_shape(), -1.0, 1.0, 11));
  const Tensor w = as_input(random_host(g.filter_shape(), -0.2, 0.2, 12));
  const Tensor dy = as_input(random_host(g.output_shape(), -1.0, 1.0, 13));
  Tensor dx_ = to_device(x, dtype), dw_ = to_device(w, dtype), ddy = to_device(dy, dtype);

  const ConvReference want = cpu_conv_reference(g, x, w, dy);
  // Twice, so the second call runs the cached plan.
  for (int round = 0; round < 2; ++round) {
    Tensor y = gpu.empty(g.output_shape(), dtype, MemoryPurpose::activations);
    gpu.conv2d_forward(g, dx_, dw_, y);
    expect_close(to_host_f32(y), want.y, tol, name + " forward");

    Tensor gx = gpu.empty(g.input_shape(), dtype, MemoryPurpose::activations);
    gpu.conv2d_backward_data(g, ddy, dw_, gx);
    expect_close(to_host_f32(gx), want.dx, tol, name + " backward data");

    Tensor gw = gpu.empty(g.filter_shape(), dtype, MemoryPurpose::gradients);
    gpu.conv2d_backward_filter(g, dx_, ddy, gw);
    expect_close(to_host_f32(gw), want.dw, tol, name + " backward filter");
  }
}

TEST(GpuConvChecks, RejectsGroupsThatDoNotDivideTheChannels) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  const Conv2dGeometry g = conv_geometry(1, 4, 6, 4, 3, 1, 1, 4);
  Tensor x = gpu.zeros(g.input_shape(), DType::f32, MemoryPurpose::activations);
  Tensor w = gpu.zeros({4, 3, 3, 1}, DType::f32, MemoryPurpose::weights);
  Tensor y = gpu.zeros(g.output_shape(), DType::f32, MemoryPurpose::activations);
  EXPECT_THROW(gpu.conv2d_forward(g, x, w, y), Error);
}

TEST(GpuConvChecks, RejectsWrongShapesAndHostTensors) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  const Conv2dGeometry g = conv_geometry(1, 4, 8, 8, 3, 1, 1);
  Tensor x = gpu.zeros(g.input_shape(), DType::f32, MemoryPurpose::activations);
  Tensor w = gpu.zeros({8, 3, 3, 4}, DType::f32, MemoryPurpose::weights);
  Tensor y = gpu.zeros(g.output_shape(), DType::f32, MemoryPurpose::activations);
  EXPECT_THROW(gpu.conv2d_forward(g, x, w, y), Error);
  Tensor host_w = Tensor::host(g.filter_shape(), DType::f32);
  EXPECT_THROW(gpu.conv2d_forward(g, x, host_w, y), Error);
}

struct GemmCase {
  DType ab, c;
};

class GpuGemm : public ::testing::TestWithParam<GemmCase> {};

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuGemm,
                         ::testing::Values(GemmCase{DType::f32, DType::f32},
                                           GemmCase{DType::f16, DType::f16},
                                           GemmCase{DType::f16, DType::f32}),
                         [](const auto& info) {
                           return std::string(dtype_name(info.param.ab)) + "_" +
                                  std::string(dtype_name(info.param.c));
                         });

TEST_P(GpuGemm, EveryTransposeMatchesCpu) {
  PFC_REQUIRE_GPU();
  const auto [ab, c_type] = GetParam();
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t m = 37, n = 53, k = 129;
  const double tol = ab == DType::f16 ? kTolF16 : kTolF32;
  auto round = [](DType t, const Tensor& v) { return t == DType::f16 ? round_to_half(v) : v; };
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const Tensor a = round(ab, random_host(ta ? Shape{k, m} : Shape{m, k}, -1.0, 1.0, 21));
      const Tensor b = round(ab, random_host(tb ? Shape{n, k} : Shape{k, n}, -1.0, 1.0, 22));
      const Tensor c0 = round(c_type, random_host({m, n}, -1.0, 1.0, 23));
      Tensor da = to_device(a, ab), db = to_device(b, ab), dc = to_device(c0, c_type);
      gpu.gemm(ta, tb, 0.7, da, db, 0.3, dc);
      Tensor want = clone_host(c0);
      cpu.gemm(ta, tb, 0.7, a, b, 0.3, want);
      expect_close(to_host_f32(dc), want, tol,
                   "gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
  }
}

TEST(GpuGemmChecks, RejectsMixedDtypes) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  Tensor a = gpu.zeros({2, 3}, DType::f32, MemoryPurpose::activations);
  Tensor b = gpu.zeros({3, 4}, DType::f16, MemoryPurpose::activations);
  Tensor c = gpu.zeros({2, 4}, DType::f32, MemoryPurpose::activations);
  EXPECT_THROW(gpu.gemm(false, false, 1.0, a, b, 0.0, c), Error);
}

}  // namespace
}  // namespace pfc::test
