#include "model/vit_attention.h"

namespace pfc {

VitAttention::VitAttention(const ModelContext& ctx, const std::string& name, std::int64_t width,
                           std::int64_t heads)
    : ctx_(ctx),
      attention_dtype_(ctx.master_dtype()),
      width_(width),
      heads_(heads),
      qkv_(ctx, name + ".qkv", width, 3 * width, /*with_bias=*/false),
      proj_(ctx, name + ".proj", width, width, /*with_bias=*/true) {
  PFC_CHECK(heads >= 1 && width % heads == 0, "{}: {} heads do not divide the width {}", name,
            heads, width);
}

Tensor VitAttention::in_type(const Tensor& x, DType dtype) const {
  if (x.dtype() == dtype) return x;
  Tensor y = ctx_.backend->empty(x.shape(), dtype, MemoryPurpose::activations);
  ctx_.backend->cast(x, y);
  return y;
}

Tensor VitAttention::forward(const Tensor& x, std::int64_t samples, ForwardMode mode) {
  PFC_CHECK(samples >= 1 && x.rank() == 2 && x.dim(0) % samples == 0,
            "attention: input {} is not [{} samples x tokens, width]", x.describe(), samples);
  Backend& be = *ctx_.backend;
  layout_ = AttentionLayout{samples, x.dim(0) / samples, width_, heads_};
  const AttentionLayout& l = layout_;
  const Tensor qkv = in_type(qkv_.forward(x, mode), attention_dtype_);
  Tensor scores = be.empty({l.samples * l.heads * l.tokens, l.tokens}, attention_dtype_,
                           MemoryPurpose::activations);
  Tensor out = be.empty({l.samples * l.tokens, width_}, attention_dtype_,
                        MemoryPurpose::activations);
  attention_forward(be, l, qkv, scores, out);
  if (mode == ForwardMode::training) {
    saved_qkv_ = qkv;
    saved_scores_ = scores;
  }
  return proj_.forward(in_type(out, ctx_.activation_dtype), mode);
}

Tensor VitAttention::backward(const Tensor& dy) {
  PFC_CHECK(saved_scores_.defined(), "attention: backward without a training forward");
  Backend& be = *ctx_.backend;
  const AttentionLayout& l = layout_;
  const std::int64_t t = l.tokens, d = l.head_dim();
  const Tensor dout = in_type(proj_.backward(dy), attention_dtype_);
  Tensor dscores = be.empty(saved_scores_.shape(), attention_dtype_, MemoryPurpose::activations);
  Tensor dqkv = be.empty(saved_qkv_.shape(), attention_dtype_, MemoryPurpose::activations);
  // d scores = dout vᵀ; d v = scoresᵀ dout.
  be.batched_gemm(l.geometry(t, t, d, false, true, l.token_part(), l.qkv_part(2), l.scores_part()),
                  1.0, dout, saved_qkv_, 0.0, dscores);
  be.batched_gemm(l.geometry(t, d, t, true, false, l.scores_part(), l.token_part(), l.qkv_part(2)),
                  1.0, saved_scores_, dout, 0.0, dqkv);
  // Through the softmax, in place; then d q = scale d logits k, d k = scale d logitsᵀ q.
  be.softmax_rows_backward(dscores, saved_scores_, dscores);
  be.batched_gemm(l.geometry(t, d, t, false, false, l.scores_part(), l.qkv_part(1), l.qkv_part(0)),
                  l.scale(), dscores, saved_qkv_, 0.0, dqkv);
  be.batched_gemm(l.geometry(t, d, t, true, false, l.scores_part(), l.qkv_part(0), l.qkv_part(1)),
                  l.scale(), dscores, saved_qkv_, 0.0, dqkv);
  saved_qkv_ = Tensor();
  saved_scores_ = Tensor();
  return qkv_.backward(in_type(dqkv, ctx_.activation_dtype));
}

void VitAttention::release() {
  saved_qkv_ = Tensor();
  saved_scores_ = Tensor();
  qkv_.release();
  proj_.release();
}

void VitAttention::collect(std::vector<Parameter*>& parameters) {
  qkv_.collect(parameters);
  proj_.collect(parameters);
}

GraphValue VitAttention::trace(InferenceGraph& graph, GraphValue x) const {
  return proj_.trace(graph, graph.attention(qkv_.trace(graph, x), heads_));
}

}  // namespace pfc
