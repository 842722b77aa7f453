#include "model/vit_block.h"

namespace pfc {

VitBlock::VitBlock(const ModelContext& ctx, const std::string& name, std::int64_t width,
                   std::int64_t heads, std::int64_t mlp_hidden, double drop_path_rate,
                   bool checkpoint)
    : ctx_(ctx),
      rate_(drop_path_rate),
      checkpoint_(checkpoint),
      norm1_(ctx, name + ".norm1", width),
      norm2_(ctx, name + ".norm2", width),
      attn_(ctx, name + ".attn", width, heads),
      mlp_(ctx, name + ".mlp", width, mlp_hidden) {}

Tensor VitBlock::factors(const std::vector<std::uint8_t>& keep) const {
  PFC_CHECK(static_cast<std::int64_t>(keep.size()) == samples_,
            "{}: {} DropPath decisions for {} samples", norm1_.weight.name, keep.size(), samples_);
  Tensor host = Tensor::host({samples_}, DType::f64);
  for (std::int64_t s = 0; s < samples_; ++s)
    host.data<double>()[s] = keep[s] ? 1.0 / (1.0 - rate_) : 0.0;
  Tensor f = ctx_.backend->empty({samples_}, ctx_.master_dtype(), MemoryPurpose::activations);
  ctx_.backend->copy_cast(host, f);
  return f;
}

Tensor VitBlock::residual(const Tensor& x, const Tensor& branch, const Tensor& factor) const {
  Backend& be = *ctx_.backend;
  if (factor.defined()) {
    Tensor per_sample = branch.reshape({samples_, branch.numel() / samples_});
    be.scale_samples(per_sample, factor, per_sample);
  }
  Tensor y = be.empty(x.shape(), x.dtype(), MemoryPurpose::activations);
  be.add(x, branch, y);
  return y;
}

Tensor VitBlock::scaled(const Tensor& g, const Tensor& factor) const {
  if (!dropped_) return g;
  Tensor out = ctx_.backend->empty(g.shape(), g.dtype(), MemoryPurpose::activations);
  Tensor out_rows = out.reshape({samples_, g.numel() / samples_});
  ctx_.backend->scale_samples(g.reshape({samples_, g.numel() / samples_}), factor, out_rows);
  return out;
}

Tensor VitBlock::run(const Tensor& x, ForwardMode layers_mode, bool drop_path) {
  const Tensor attention =
      attn_.forward(norm1_.forward(x, layers_mode), samples_, layers_mode);
  const Tensor x1 = residual(x, attention, drop_path ? attention_factor_ : Tensor());
  return residual(x1, mlp_.forward(norm2_.forward(x1, layers_mode), layers_mode),
                  drop_path ? mlp_factor_ : Tensor());
}

Tensor VitBlock::forward(const Tensor& x, std::int64_t samples, ForwardMode mode,
                         const BlockDropPath& drop) {
  samples_ = samples;
  dropped_ = mode == ForwardMode::training && rate_ > 0.0;
  if (dropped_) {
    attention_factor_ = factors(drop.attention_keep);
    mlp_factor_ = factors(drop.mlp_keep);
  }
  if (mode == ForwardMode::training && checkpoint_) {
    checkpoint_input_ = x;
    return run(x, ForwardMode::inference, dropped_);
  }
  return run(x, mode, dropped_);
}

Tensor VitBlock::backward(const Tensor& dy) {
  Backend& be = *ctx_.backend;
  if (checkpoint_) {
    PFC_CHECK(checkpoint_input_.defined(), "{}: backward without a training forward",
              norm1_.weight.name);
    run(checkpoint_input_, ForwardMode::training, dropped_);
    checkpoint_input_ = Tensor();
  }
  // The residual passes dy on; each branch gets it through its DropPath factor.
  const Tensor dmlp = norm2_.backward(mlp_.backward(scaled(dy, mlp_factor_)));
  Tensor dx1 = be.empty(dy.shape(), dy.dtype(), MemoryPurpose::activations);
  be.add(dy, dmlp, dx1);
  const Tensor dattn = norm1_.backward(attn_.backward(scaled(dx1, attention_factor_)));
  Tensor dx = be.empty(dy.shape(), dy.dtype(), MemoryPurpose::activations);
  be.add(dx1, dattn, dx);
  attention_factor_ = Tensor();
  mlp_factor_ = Tensor();
  return dx;
}

void VitBlock::release() {
  norm1_.release();
  norm2_.release();
  attn_.release();
  mlp_.release();
  attention_factor_ = Tensor();
  mlp_factor_ = Tensor();
  checkpoint_input_ = Tensor();
}

void VitBlock::collect(std::vector<Parameter*>& parameters) {
  norm1_.collect(parameters);
  norm2_.collect(parameters);
  attn_.collect(parameters);
  mlp_.collect(parameters);
}

GraphValue VitBlock::trace(InferenceGraph& graph, GraphValue x) const {
  const GraphValue mid = graph.add(x, attn_.trace(graph, norm1_.trace(graph, x)));
  return graph.add(mid, mlp_.trace(graph, norm2_.trace(graph, mid)));
}

}  // namespace pfc
