#include "model/attention_layout.h"

#include <cmath>

namespace pfc {

double AttentionLayout::scale() const {
  return 1.0 / std::sqrt(static_cast<double>(head_dim()));
}

MatrixBatchLayout AttentionLayout::qkv_part(std::int64_t part) const {
  return {part * width, 3 * width, tokens * 3 * width, head_dim()};
}

MatrixBatchLayout AttentionLayout::token_part() const {
  return {0, width, tokens * width, head_dim()};
}

MatrixBatchLayout AttentionLayout::scores_part() const {
  return {0, tokens, heads * tokens * tokens, tokens * tokens};
}

BatchedGemmGeometry AttentionLayout::geometry(std::int64_t m, std::int64_t n, std::int64_t k,
                                              bool ta, bool tb, MatrixBatchLayout a,
                                              MatrixBatchLayout b, MatrixBatchLayout c) const {
  BatchedGemmGeometry g;
  g.outer = samples;
  g.inner = heads;
  g.m = m;
  g.n = n;
  g.k = k;
  g.transpose_a = ta;
  g.transpose_b = tb;
  g.a = a;
  g.b = b;
  g.c = c;
  return g;
}

void attention_forward(Backend& backend, const AttentionLayout& l, const Tensor& qkv,
                       Tensor& scores, Tensor& out) {
  backend.batched_gemm(l.geometry(l.tokens, l.tokens, l.head_dim(), false, true, l.qkv_part(0),
                                  l.qkv_part(1), l.scores_part()),
                       l.scale(), qkv, qkv, 0.0, scores);
  backend.softmax_rows_forward(scores, scores);
  const BatchedGemmGeometry times_v = l.geometry(l.tokens, l.head_dim(), l.tokens, false, false,
                                                 l.scores_part(), l.qkv_part(2), l.token_part());
  if (qkv.dtype() == scores.dtype()) {
    backend.batched_gemm(times_v, 1.0, scores, qkv, 0.0, out);
    return;
  }
  Tensor operand = backend.empty(scores.shape(), qkv.dtype(), MemoryPurpose::activations);
  backend.cast(scores, operand);
  backend.batched_gemm(times_v, 1.0, operand, qkv, 0.0, out);
}

}  // namespace pfc
