// Where multi-head self-attention finds its (sample, head) matrices: q, k and v are read where
// they lie in the qkv rows [samples, tokens, 3, heads, head_dim], the scores are
// [samples, heads, tokens, tokens], and the output is written straight into the token layout
// [samples, tokens, heads, head_dim], by Backend::batched_gemm. One description for the
// training layer (VitAttention) and the prepared inference network, so both compute the same.
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace pfc {

struct AttentionLayout {
  std::int64_t samples = 0, tokens = 0, width = 0, heads = 1;

  std::int64_t head_dim() const { return width / heads; }
  // The scores' factor, 1 / sqrt(head_dim).
  double scale() const;
  // q, k or v (`part` 0, 1, 2) in qkv [samples, tokens, 3 width].
  MatrixBatchLayout qkv_part(std::int64_t part) const;
  // The output [samples, tokens, width].
  MatrixBatchLayout token_part() const;
  // The scores [samples, heads, tokens, tokens].
  MatrixBatchLayout scores_part() const;
  // One product per (sample, head).
  BatchedGemmGeometry geometry(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb,
                               MatrixBatchLayout a, MatrixBatchLayout b,
                               MatrixBatchLayout c) const;
};

// scores := softmax(q kᵀ / sqrt(head_dim)) and out := scores v, per (sample, head); qkv, scores
// [samples * heads * tokens, tokens] and out [samples * tokens, width] of one type, or qkv
// bf16 beside f32 scores and out (bf16 products: the scores are rounded to bf16 for the
// second product, as the first product's operands are).
void attention_forward(Backend& backend, const AttentionLayout& layout, const Tensor& qkv,
                       Tensor& scores, Tensor& out);

}  // namespace pfc
