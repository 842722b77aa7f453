// The meta backend's batched GEMM and transformer primitives: FLOPs and bytes against hand
// counts (a batched GEMM counts the matrices it reads, not the tensors they lie in; f16 ones
// run on tensor cores).
#include <gtest/gtest.h>

#include "backend/meta/meta_backend.h"

namespace pfc {
namespace {

TEST(MetaTransformerOps, BatchedGemmCountsItsMatrices) {
  MetaBackend meta(BackendKind::cuda);
  // q kᵀ of 2 samples x 3 heads, 7 tokens, head width 4, from qkv [2, 7, 36].
  BatchedGemmGeometry g;
  g.outer = 2;
  g.inner = 3;
  g.m = g.n = 7;
  g.k = 4;
  g.transpose_b = true;
  g.a = {0, 36, 7 * 36, 4};
  g.b = {12, 36, 7 * 36, 4};
  g.c = {0, 7, 3 * 49, 49};
  for (const DType dtype : {DType::f32, DType::f16}) {
    Tensor qkv = meta.empty({2, 7, 36}, dtype, MemoryPurpose::activations);
    Tensor scores = meta.empty({42, 7}, dtype, MemoryPurpose::activations);
    const ArithmeticTally before = meta.tally();
    meta.batched_gemm(g, 0.5, qkv, qkv, 0.0, scores);
    const Work w = meta.tally().since(before).by_primitive().at("batched_gemm");
    const double flops = 2.0 * 6 * 7 * 7 * 4, element = dtype == DType::f16 ? 2 : 4;
    EXPECT_EQ(dtype == DType::f16 ? w.tensor_flops : w.other_flops, flops);
    EXPECT_EQ(w.bytes_read, element * 6 * (28 + 28));
    EXPECT_EQ(w.bytes_written, element * 6 * 49);
  }
}

TEST(MetaTransformerOps, PerElementPrimitivesCountEveryElement) {
  MetaBackend meta(BackendKind::cpu);
  Tensor x = meta.empty({6, 4}, DType::f32, MemoryPurpose::activations);
  Tensor y = meta.empty({6, 4}, DType::f32, MemoryPurpose::activations);
  Tensor p = meta.empty({4}, DType::f32, MemoryPurpose::weights);
  Tensor q = meta.empty({4}, DType::f32, MemoryPurpose::weights);
  Tensor rows = meta.empty({6}, DType::f32, MemoryPurpose::activations);
  Tensor rows2 = meta.empty({6}, DType::f32, MemoryPurpose::activations);
  meta.layernorm_forward(x, p, q, 1e-6, y, rows, rows2);
  meta.layernorm_backward(y, x, p, rows, rows2, x, p, q);
  meta.softmax_rows_forward(x, x);
  meta.softmax_rows_backward(y, x, y);
  meta.relu6_forward(x, x);
  meta.relu6_backward(y, x, y);
  meta.scale_samples(x, rows, y);
  const auto& by = meta.tally().by_primitive();
  EXPECT_EQ(by.at("layernorm_forward").other_flops, 8 * 24);
  EXPECT_EQ(by.at("layernorm_forward").bytes_written, 4 * (24 + 12));
  EXPECT_EQ(by.at("layernorm_backward").bytes_read, 4 * (48 + 4 + 12));
  EXPECT_EQ(by.at("softmax_rows_forward").bytes_read, 4 * 24);
  EXPECT_EQ(by.at("relu6_backward").bytes_read, 4 * 48);
  EXPECT_EQ(by.at("scale_samples").bytes_read, 4 * (24 + 6));
  EXPECT_EQ(by.at("scale_samples").other_flops, 24);
  EXPECT_EQ(meta.tally().total().calls, 7);
}

}  // namespace
}  // namespace pfc
