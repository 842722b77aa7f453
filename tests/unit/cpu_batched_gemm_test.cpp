// CpuBackend batched GEMM on attention's layouts: q kᵀ read from the interleaved qkv rows
// (sample, head batches), scores × v written straight into the token layout, the transposed
// products of the backward pass, and beta keeping c. f64 runs the reference loops, f32 OpenBLAS;
// both against a plain definition.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
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

constexpr std::int64_t kBatch = 2, kTokens = 7, kHeads = 3, kHeadDim = 4;
constexpr std::int64_t kWidth = kHeads * kHeadDim;

// scores[b, h] = q_bh k_bhᵀ, q and k columns of qkv [batch, tokens, 3, heads, head_dim].
BatchedGemmGeometry scores_geometry() {
  BatchedGemmGeometry g;
  g.outer = kBatch;
  g.inner = kHeads;
  g.m = g.n = kTokens;
  g.k = kHeadDim;
  g.transpose_b = true;
  g.a = {0, 3 * kWidth, kTokens * 3 * kWidth, kHeadDim};
  g.b = {kWidth, 3 * kWidth, kTokens * 3 * kWidth, kHeadDim};
  g.c = {0, kTokens, kHeads * kTokens * kTokens, kTokens * kTokens};
  return g;
}

// out[b, :, h] = scores[b, h] v_bh, written into [batch, tokens, width].
BatchedGemmGeometry values_geometry() {
  BatchedGemmGeometry g;
  g.outer = kBatch;
  g.inner = kHeads;
  g.m = kTokens;
  g.n = kHeadDim;
  g.k = kTokens;
  g.a = {0, kTokens, kHeads * kTokens * kTokens, kTokens * kTokens};
  g.b = {2 * kWidth, 3 * kWidth, kTokens * 3 * kWidth, kHeadDim};
  g.c = {0, kWidth, kTokens * kWidth, kHeadDim};
  return g;
}

// dv_bh = scores_bhᵀ dout_bh: the transposed a of the backward pass, accumulated (beta 1).
BatchedGemmGeometry values_grad_geometry() {
  BatchedGemmGeometry g;
  g.outer = kBatch;
  g.inner = kHeads;
  g.m = kTokens;
  g.n = kHeadDim;
  g.k = kTokens;
  g.transpose_a = true;
  g.a = {0, kTokens, kHeads * kTokens * kTokens, kTokens * kTokens};
  g.b = {0, kWidth, kTokens * kWidth, kHeadDim};
  g.c = {2 * kWidth, 3 * kWidth, kTokens * 3 * kWidth, kHeadDim};
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
