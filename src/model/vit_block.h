// vit.py's Block: x + drop_path(attn(norm1(x))), then x + drop_path(mlp(norm2(x))). DropPath
// (timm's: stochastic depth per sample) multiplies each branch by its per-sample factor: 0 for a
// dropped sample, 1 / (1 - rate) for a kept one. With `checkpoint` (vit.py's using_checkpoint,
// torch.utils.checkpoint) a training forward keeps only its input and recomputes the rest in the
// backward, so one block's activations at a time are held.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/layer_norm.h"
#include "model/vit_attention.h"
#include "model/vit_mlp.h"

namespace pfc {

// One training forward's DropPath decisions for a block: which samples keep each branch.
struct BlockDropPath {
  std::vector<std::uint8_t> attention_keep, mlp_keep;  // [samples], 1 = kept
};

class VitBlock {
 public:
  VitBlock(const ModelContext& ctx, const std::string& name, std::int64_t width,
           std::int64_t heads, std::int64_t mlp_hidden, double drop_path_rate, bool checkpoint);

  // x [samples * tokens, width]. `drop` is used in training when the rate is above 0.
  Tensor forward(const Tensor& x, std::int64_t samples, ForwardMode mode,
                 const BlockDropPath& drop);
  Tensor backward(const Tensor& dy);
  void release();
  // PyTorch's order: norm1, norm2, attn, mlp (the order vit.py creates them in).
  void collect(std::vector<Parameter*>& parameters);
  // In inference mode DropPath is the identity: x + attn(norm1(x)), then + mlp(norm2(.)).
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  // The block's forward; its layers keep what their backward needs in `layers_mode` training.
  Tensor run(const Tensor& x, ForwardMode layers_mode, bool drop_path);
  // factor [samples] of the master type from the keep decisions.
  Tensor factors(const std::vector<std::uint8_t>& keep) const;
  // x + branch, the branch scaled in place by `factor` where one is given.
  Tensor residual(const Tensor& x, const Tensor& branch, const Tensor& factor) const;
  // g through a DropPath factor in the backward (g itself without DropPath).
  Tensor scaled(const Tensor& g, const Tensor& factor) const;

  ModelContext ctx_;
  double rate_;
  bool checkpoint_;
  LayerNorm norm1_, norm2_;
  VitAttention attn_;
  VitMlp mlp_;
  std::int64_t samples_ = 0;
  bool dropped_ = false;                      // the training forward applied DropPath
  Tensor attention_factor_, mlp_factor_;      // its factors, for the backward
  Tensor checkpoint_input_;                   // with checkpointing: the input, to recompute
};

}  // namespace pfc
