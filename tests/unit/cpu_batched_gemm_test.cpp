// CpuBackend batched GEMM on attention's layouts: q kᵀ read from the interleaved qkv rows
// (sample, head batches), scores × v written straight into the token layout, the transposed
// products of the backward pass, and beta keeping c. f64 runs the reference loops, f32 oneDNN's
// sgemm; both against a plain definition. bf16 operands (bf16 inference) write f32: oneDNN's
// batched matmul, or the widened operands' f32 products.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn_bf16_gemm.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// c_ij = alpha * op(a_ij) op(b_ij) + beta * c_ij in f64, element by element from the layouts.
Tensor definition(const BatchedGemmGeometry& g, double alpha, const Tensor& a, const Tensor& b,
                  double beta, const Tensor& c) {
  Tensor out = test::to_f64(c);
  double* po = out.data<double>();
  for (std::int64_t i = 0; i < g.outer; ++i)
    for (std::int64_t j = 0; j < g.inner; ++j) {
      const std::int64_t oa = g.a.offset + i * g.a.outer_stride + j * g.a.inner_stride;
      const std::int64_t ob = g.b.offset + i * g.b.outer_stride + j * g.b.inner_stride;
      const std::int64_t oc = g.c.offset + i * g.c.outer_stride + j * g.c.inner_stride;
      for (std::int64_t r = 0; r < g.m; ++r)
        for (std::int64_t s = 0; s < g.n; ++s) {
          double sum = 0;
          for (std::int64_t p = 0; p < g.k; ++p)
            sum += element(a, oa + (g.transpose_a ? p * g.a.ld + r : r * g.a.ld + p)) *
                   element(b, ob + (g.transpose_b ? s * g.b.ld + p : p * g.b.ld + s));
          double& v = po[oc + r * g.c.ld + s];
          v = alpha * sum + beta * v;
        }
    }
  return out;
}

// Attention's dimensions: the small odd ones of most cases, or others.
struct Dims {
  std::int64_t batch = 2, tokens = 7, heads = 3, head_dim = 4;
  std::int64_t width() const { return heads * head_dim; }
  Shape qkv() const { return {batch, tokens, 3 * width()}; }
  Shape scores() const { return {batch * heads * tokens, tokens}; }
  Shape out() const { return {batch, tokens, width()}; }
};
constexpr std::int64_t kBatch = 2, kTokens = 7, kHeads = 3, kHeadDim = 4;
constexpr std::int64_t kWidth = kHeads * kHeadDim;

// scores[b, h] = q_bh k_bhᵀ, q and k columns of qkv [batch, tokens, 3, heads, head_dim].
BatchedGemmGeometry scores_geometry(const Dims& d = {}) {
  BatchedGemmGeometry g;
  g.outer = d.batch;
  g.inner = d.heads;
  g.m = g.n = d.tokens;
  g.k = d.head_dim;
  g.transpose_b = true;
  g.a = {0, 3 * d.width(), d.tokens * 3 * d.width(), d.head_dim};
  g.b = {d.width(), 3 * d.width(), d.tokens * 3 * d.width(), d.head_dim};
  g.c = {0, d.tokens, d.heads * d.tokens * d.tokens, d.tokens * d.tokens};
  return g;
}

// out[b, :, h] = scores[b, h] v_bh, written into [batch, tokens, width].
BatchedGemmGeometry values_geometry(const Dims& d = {}) {
  BatchedGemmGeometry g;
  g.outer = d.batch;
  g.inner = d.heads;
  g.m = d.tokens;
  g.n = d.head_dim;
  g.k = d.tokens;
  g.a = {0, d.tokens, d.heads * d.tokens * d.tokens, d.tokens * d.tokens};
  g.b = {2 * d.width(), 3 * d.width(), d.tokens * 3 * d.width(), d.head_dim};
  g.c = {0, d.width(), d.tokens * d.width(), d.head_dim};
  return g;
}

// dv_bh = scores_bhᵀ dout_bh: the transposed a of the backward pass, accumulated (beta 1).
BatchedGemmGeometry values_grad_geometry(const Dims& d = {}) {
  BatchedGemmGeometry g;
  g.outer = d.batch;
  g.inner = d.heads;
  g.m = d.tokens;
  g.n = d.head_dim;
  g.k = d.tokens;
  g.transpose_a = true;
  g.a = {0, d.tokens, d.heads * d.tokens * d.tokens, d.tokens * d.tokens};
  g.b = {0, d.width(), d.tokens * d.width(), d.head_dim};
  g.c = {2 * d.width(), 3 * d.width(), d.tokens * 3 * d.width(), d.head_dim};
  return g;
}

void expect_matches_definition(const BatchedGemmGeometry& g, const Shape& a_shape,
                               const Shape& b_shape, const Shape& c_shape, double alpha,
                               double beta) {
  CpuBackend backend;
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Tensor a = random_uniform(a_shape, dtype, 1);
    const Tensor b = random_uniform(b_shape, dtype, 2);
    Tensor c = random_uniform(c_shape, dtype, 3);
    const Tensor want = definition(g, alpha, a, b, beta, c);
    backend.batched_gemm(g, alpha, a, b, beta, c);
    const double tol = dtype == DType::f32 ? 1e-5 : 1e-13;
    test::expect_tensors_near(c, want, tol, tol, std::string(dtype_name(dtype)));
  }
}

TEST(CpuBatchedGemm, ScoresFromInterleavedQueriesAndKeys) {
  expect_matches_definition(scores_geometry(), {kBatch, kTokens, 3 * kWidth},
                            {kBatch, kTokens, 3 * kWidth}, {kBatch * kHeads * kTokens, kTokens},
                            0.5, 0.0);
}

TEST(CpuBatchedGemm, ValuesWrittenIntoTheTokenLayout) {
  expect_matches_definition(values_geometry(), {kBatch * kHeads * kTokens, kTokens},
                            {kBatch, kTokens, 3 * kWidth}, {kBatch, kTokens, kWidth}, 1.0, 0.0);
}

TEST(CpuBatchedGemm, TransposedProductAccumulatesWithBeta) {
  expect_matches_definition(values_grad_geometry(), {kBatch * kHeads * kTokens, kTokens},
                            {kBatch, kTokens, kWidth}, {kBatch, kTokens, 3 * kWidth}, 1.0, 1.0);
}

TEST(CpuBatchedGemm, OneRowMatrices) {
  BatchedGemmGeometry g;
  g.outer = 3;
  g.m = 1;
  g.n = 5;
  g.k = 4;
  g.transpose_a = true;
  g.a = {0, 1, 4, 0};
  g.b = {0, 5, 20, 0};
  g.c = {0, 5, 5, 0};
  expect_matches_definition(g, {12}, {3, 4, 5}, {3, 5}, 1.0, 0.0);
}

// bf16 operands with an f32 result: each product is exact in f32 and only the f32 sums round,
// so the result equals the definition over the bf16 values to f32 accuracy. vit_t's shapes
// (oneDNN's batched matmul where the CPU has bf16 instructions) and the small odd ones; beta 1
// takes the widened path.
TEST(CpuBatchedGemm, Bf16OperandsAccumulateInF32) {
  CpuBackend backend;
  auto bf16 = [&](const Shape& shape, std::uint64_t seed) {
    Tensor t = Tensor::host(shape, DType::bf16);
    backend.cast(random_uniform(shape, DType::f32, seed), t);
    return t;
  };
  for (const Dims& d : {Dims{}, Dims{2, 144, 8, 32}}) {
    struct Case {
      const char* name;
      BatchedGemmGeometry g;
      Shape a, b, c;
      double alpha, beta;
    };
    for (const Case& k : {Case{"scores", scores_geometry(d), d.qkv(), d.qkv(), d.scores(), 0.5, 0},
                          Case{"values", values_geometry(d), d.scores(), d.qkv(), d.out(), 1, 0},
                          Case{"values_grad", values_grad_geometry(d), d.scores(), d.out(),
                               d.qkv(), 1, 1}}) {
      const Tensor a = bf16(k.a, 1), b = bf16(k.b, 2);
      Tensor c = random_uniform(k.c, DType::f32, 3);
      const Tensor want = definition(k.g, k.alpha, a, b, k.beta, c);
      backend.batched_gemm(k.g, k.alpha, a, b, k.beta, c);
      test::expect_tensors_near(c, want, 1e-5, 1e-5, fmt::format("{} tokens {}", k.name, d.tokens));
    }
  }
  Tensor scores16 = Tensor::host(Dims{}.scores(), DType::bf16);
  EXPECT_THROW(backend.batched_gemm(scores_geometry(), 1.0, bf16(Dims{}.qkv(), 1),
                                    bf16(Dims{}.qkv(), 2), 0.0, scores16),
               Error);
}

// oneDNN takes vit_t's attention products on bf16 operands as one matmul over the batch.
TEST(CpuBatchedGemm, OneDnnTakesVitTsBf16AttentionProducts) {
  if (!cpu::onednn_bf16_native()) GTEST_SKIP() << "no bf16 instructions on this CPU";
  const Dims d{4, 144, 8, 32};
  cpu::Bf16GemmShape s;
  s.transpose_b = true;
  s.m = s.n = d.tokens;
  s.k = d.head_dim;
  s.lda = s.ldb = 3 * d.width();
  s.ldc = d.tokens;
  s.alpha = 0.25f;
  s.outer = d.batch;
  s.inner = d.heads;
  s.a_outer_stride = s.b_outer_stride = d.tokens * 3 * d.width();
  s.a_inner_stride = s.b_inner_stride = d.head_dim;
  s.c_outer_stride = d.heads * d.tokens * d.tokens;
  s.c_inner_stride = d.tokens * d.tokens;
  EXPECT_TRUE(cpu::onednn_bf16_gemm_workspace_bytes(s).has_value());
}

TEST(CpuBatchedGemm, RejectsALastMatrixOutsideTheTensor) {
  CpuBackend backend;
  BatchedGemmGeometry g = scores_geometry();
  const Tensor qkv = random_uniform({kBatch, kTokens, 3 * kWidth}, DType::f32, 1);
  Tensor scores = Tensor::host({kBatch * kHeads * kTokens - 1, kTokens}, DType::f32);
  EXPECT_THROW(backend.batched_gemm(g, 1.0, qkv, qkv, 0.0, scores), Error);
  g.b.ld = kHeadDim - 1;  // rows shorter than the matrix
  Tensor full = Tensor::host({kBatch * kHeads * kTokens, kTokens}, DType::f32);
  EXPECT_THROW(backend.batched_gemm(g, 1.0, qkv, qkv, 0.0, full), Error);
}

}  // namespace
}  // namespace pfc
