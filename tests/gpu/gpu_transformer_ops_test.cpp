// The Vision Transformer's primitives on CUDA against the CPU backend: LayerNorm forward and
// backward, the row softmax and its backward (in place), ReLU6, DropPath's per-sample scaling,
// and cuBLAS's strided-batched GEMM on attention's interleaved layouts, in f32 and f16.
#include <string>

#include "gpu_test_support.h"

namespace pfc::test {
namespace {

class GpuTransformerOps : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
  DType dtype() const { return GetParam(); }
  Tensor activation(const Shape& shape, double lo, double hi, std::uint64_t seed) const {
    Tensor t = random_host(shape, lo, hi, seed);
    return dtype() == DType::f16 ? round_to_half(t) : t;
  }
  double sum_tolerance() const { return dtype() == DType::f16 ? kTolF16 : 4 * kTolF32; }
};

INSTANTIATE_TEST_SUITE_P(Types, GpuTransformerOps, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuTransformerOps, LayerNormForwardAndBackward) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // 2 x 144 tokens of width 72: part of a 32-channel tile empty, many row blocks.
  const std::int64_t rows = 288, width = 72;
  const Shape shape = {2, 144, width};
  const Tensor x = activation(shape, 2.0, 4.0, 1);
  const Tensor gamma = random_host({width}, 0.5, 1.5, 2), beta = random_host({width}, -0.5, 0.5, 3);
  const Tensor dy = activation(shape, -1.0, 1.0, 4);
  Tensor y = Tensor::host(shape, DType::f32), mean = Tensor::host({rows}, DType::f32),
         invstd = Tensor::host({rows}, DType::f32);
  cpu.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd);
  Tensor dx = Tensor::host(shape, DType::f32), dgamma = Tensor::host({width}, DType::f32),
         dbeta = Tensor::host({width}, DType::f32);
  cpu.layernorm_backward(dy, x, gamma, mean, invstd, dx, dgamma, dbeta);

  Tensor gx = to_device(x, dtype()), ggamma = to_device(gamma, DType::f32),
         gbeta = to_device(beta, DType::f32), gdy = to_device(dy, dtype());
  Tensor gy = gpu.empty(shape, dtype(), MemoryPurpose::activations);
  Tensor gmean = gpu.empty({rows}, DType::f32, MemoryPurpose::activations);
  Tensor ginvstd = gpu.empty({rows}, DType::f32, MemoryPurpose::activations);
  gpu.layernorm_forward(gx, ggamma, gbeta, 1e-6, gy, gmean, ginvstd);
  Tensor gdx = gpu.empty(shape, dtype(), MemoryPurpose::activations);
  Tensor gdgamma = gpu.empty({width}, DType::f32, MemoryPurpose::weights);
  Tensor gdbeta = gpu.empty({width}, DType::f32, MemoryPurpose::weights);
  gpu.layernorm_backward(gdy, gx, ggamma, gmean, ginvstd, gdx, gdgamma, gdbeta);
  expect_close(to_host_f32(gy), y, tolerance(dtype()), "layernorm y");
  expect_close(to_host_f32(gmean), mean, kTolF32, "layernorm saved_mean");
  expect_close(to_host_f32(ginvstd), invstd, sum_tolerance(), "layernorm saved_invstd");
  expect_close(to_host_f32(gdx), dx, sum_tolerance(), "layernorm dx");
  expect_close(to_host_f32(gdgamma), dgamma, sum_tolerance(), "layernorm dgamma");
  expect_close(to_host_f32(gdbeta), dbeta, sum_tolerance(), "layernorm dbeta");
}

TEST_P(GpuTransformerOps, SoftmaxRowsInPlace) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Shape shape = {2 * 3 * 144, 144};
  const Tensor x = activation(shape, -8.0, 8.0, 5), dy = activation(shape, -1.0, 1.0, 6);
  Tensor y = Tensor::host(shape, DType::f32), dx = Tensor::host(shape, DType::f32);
  cpu.softmax_rows_forward(x, y);
  cpu.softmax_rows_backward(dy, y, dx);
  Tensor g = to_device(x, dtype()), gdy = to_device(dy, dtype());
  gpu.softmax_rows_forward(g, g);
  expect_close(to_host_f32(g), y, tolerance(dtype()), "softmax y");
  gpu.softmax_rows_backward(gdy, g, gdy);
  expect_close(to_host_f32(gdy), dx, sum_tolerance(), "softmax dx");
}

TEST_P(GpuTransformerOps, Relu6AndScaleSamples) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // 1001 elements per sample: packets and a tail, factors that change inside a packet.
  const Shape shape = {3, 7, 143};
  const Tensor x = activation(shape, -3.0, 9.0, 7), dy = activation(shape, -1.0, 1.0, 8);
  Tensor factor = Tensor::host({3}, DType::f32);
  factor.data<float>()[0] = 1.0f / 0.9f;
  factor.data<float>()[1] = 0.0f;
  factor.data<float>()[2] = 1.0f / 0.9f;
  Tensor y = Tensor::host(shape, DType::f32), dx = Tensor::host(shape, DType::f32),
         scaled = Tensor::host(shape, DType::f32);
  cpu.relu6_forward(x, y);
  cpu.relu6_backward(dy, y, dx);
  cpu.scale_samples(x, factor, scaled);
  Tensor g = to_device(x, dtype()), gdy = to_device(dy, dtype());
  Tensor gs = gpu.empty(shape, dtype(), MemoryPurpose::activations);
  gpu.scale_samples(g, to_device(factor, DType::f32), gs);
  expect_close(to_host_f32(gs), scaled, tolerance(dtype()), "scale_samples");
  gpu.relu6_forward(g, g);
  expect_close(to_host_f32(g), y, tolerance(dtype()), "relu6 y");
  gpu.relu6_backward(gdy, g, gdy);
  expect_close(to_host_f32(gdy), dx, tolerance(dtype()), "relu6 dx");
}

TEST_P(GpuTransformerOps, BatchedGemmOnAttentionLayouts) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t batch = 3, tokens = 144, heads = 4, head_dim = 16, width = heads * head_dim;
  // scores[b, h] = q_bh k_bhᵀ / sqrt(head_dim) from qkv [batch, tokens, 3 * width]; cuBLAS
  // loops over the 3 samples with a strided batch over the 4 heads.
  BatchedGemmGeometry scores;
  scores.outer = batch;
  scores.inner = heads;
  scores.m = scores.n = tokens;
  scores.k = head_dim;
  scores.transpose_b = true;
  scores.a = {0, 3 * width, tokens * 3 * width, head_dim};
  scores.b = {width, 3 * width, tokens * 3 * width, head_dim};
  scores.c = {0, tokens, heads * tokens * tokens, tokens * tokens};
  // out[b, :, h] = scores_bh v_bh into [batch, tokens, width], with heads outside: a loop over
  // the 3 samples again, from the other level.
  BatchedGemmGeometry values;
  values.outer = heads;
  values.inner = batch;
  values.m = tokens;
  values.n = head_dim;
  values.k = tokens;
  values.a = {0, tokens, tokens * tokens, heads * tokens * tokens};
  values.b = {2 * width, 3 * width, head_dim, tokens * 3 * width};
  values.c = {0, width, head_dim, tokens * width};

  const Tensor qkv = activation({batch, tokens, 3 * width}, -1.0, 1.0, 9);
  Tensor s = Tensor::host({batch * heads * tokens, tokens}, DType::f32);
  Tensor out = Tensor::host({batch, tokens, width}, DType::f32);
  cpu.batched_gemm(scores, 0.25, qkv, qkv, 0.0, s);
  const Tensor s_in = dtype() == DType::f16 ? round_to_half(s) : s;
  cpu.batched_gemm(values, 1.0, s_in, qkv, 0.0, out);

  Tensor gqkv = to_device(qkv, dtype());
  Tensor gs = gpu.empty(s.shape(), dtype(), MemoryPurpose::activations);
  gpu.batched_gemm(scores, 0.25, gqkv, gqkv, 0.0, gs);
  expect_close(to_host_f32(gs), s, tolerance(dtype()), "scores");
  Tensor gout = gpu.empty(out.shape(), dtype(), MemoryPurpose::activations);
  gpu.batched_gemm(values, 1.0, to_device(s_in, dtype()), gqkv, 0.0, gout);
  expect_close(to_host_f32(gout), out, tolerance(dtype()), "scores x values");
}

}  // namespace
}  // namespace pfc::test
