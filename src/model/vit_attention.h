// vit.py's Attention: qkv = Linear(width -> 3 width, no bias); per sample and head,
// softmax(q kᵀ / sqrt(head_dim)) v, computed in f32 even in fp16 mode (vit.py leaves autocast
// for it), f64 in an f64 run; then proj = Linear(width -> width). The (sample, head) matrices are
// read in place (model/attention_layout.h).
#pragma once

#include <string>
#include <vector>

#include "model/attention_layout.h"
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
  Tensor in_type(const Tensor& x, DType dtype) const;

  ModelContext ctx_;
  DType attention_dtype_;  // f32, or f64 in an f64 run
  std::int64_t width_, heads_;
  TokenLinear qkv_, proj_;
  AttentionLayout layout_;  // of the last forward
  Tensor saved_qkv_, saved_scores_;  // the attention type, for the backward
};

}  // namespace pfc
