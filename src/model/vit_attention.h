// vit.py's Attention: qkv = Linear(width -> 3 width, no bias); per sample and head,
// softmax(q kᵀ / sqrt(head_dim)) v, computed in f32 even in fp16 mode (vit.py leaves autocast
// for it), f64 in an f64 run; then proj = Linear(width -> width). The (sample, head) matrices are
// read where they lie in the qkv rows [tokens, 3, heads, head_dim] and the output is written
// straight into the token layout [tokens, heads, head_dim], by Backend::batched_gemm.
#pragma once

#include <string>
#include <vector>

#include "model/model_context.h"
#include "model/token_linear.h"

namespace pfc {

class VitAttention {
 public:
  VitAttention(const ModelContext& ctx, const std::string& name, std::int64_t width,
               std::int64_t heads);

  // x [samples * tokens, width] -> [samples * tokens, width].
  Tensor forward(const Tensor& x, std::int64_t samples, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  void collect(std::vector<Parameter*>& parameters);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  // The (sample, head) matrices of q, k or v (`part` 0, 1, 2) in qkv [samples, tokens, 3 width].
  MatrixBatchLayout qkv_part(std::int64_t part) const;
  // The (sample, head) matrices of the output [samples, tokens, width].
  MatrixBatchLayout token_part() const;
  // The (sample, head) score matrices [samples, heads, tokens, tokens].
  MatrixBatchLayout scores_part() const;
  BatchedGemmGeometry geometry(std::int64_t m, std::int64_t n, std::int64_t k, bool ta,
                               bool tb, MatrixBatchLayout a, MatrixBatchLayout b,
                               MatrixBatchLayout c) const;
  Tensor in_type(const Tensor& x, DType dtype) const;

  ModelContext ctx_;
  DType attention_dtype_;  // f32, or f64 in an f64 run
  std::int64_t width_, heads_, head_dim_;
  double scale_;
  TokenLinear qkv_, proj_;
  std::int64_t samples_ = 0, tokens_ = 0;
  Tensor saved_qkv_, saved_scores_;  // the attention type, for the backward
};

}  // namespace pfc
