// arcface_torch's VisionTransformer (backbones/vit.py): images [n, 112, 112, 3] -> embeddings.
//   patch_embed.proj  Conv2d 3 -> embed, kernel = stride = patch (9: 144 tokens), with bias
//   pos_embed         [1, tokens, embed], added to every sample's tokens
//   masking           training only, when mask_ratio > 0: the tokens ranked by uniform noise
//                     and the int(tokens * 0.9) lowest kept (vit.py calls random_masking with
//                     its default ratio 0.1 whatever mask_ratio says)
//   blocks.i          VitBlock, DropPath rate i / (depth - 1) * drop_path_rate (linspace)
//   norm              LayerNorm, in f32 (x.float()); f64 in an f64 run
//   mask_token        [1, 1, embed]: fills the dropped positions, the sequence back in order
//   feature           flatten tokens x embed -> Linear (no bias) -> BatchNorm1d (eps 2e-5)
//                     -> Linear (no bias) -> BatchNorm1d (eps 2e-5)
// The feature head computes in the master type (f32; f64 in an f64 run). Parameters and buffers
// carry PyTorch's state_dict names and order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/backbone.h"
#include "model/batch_norm.h"
#include "model/conv2d.h"
#include "model/layer_norm.h"
#include "model/model_context.h"
#include "model/token_linear.h"
#include "model/vit_block.h"
#include "model/vit_random_draws.h"

namespace pfc {

struct VisionTransformerOptions {
  std::int64_t image_size = 112;
  std::int64_t patch_size = 9;
  std::int64_t embed_dim = 256;
  std::int64_t depth = 12;
  std::int64_t num_heads = 8;
  std::int64_t mlp_ratio = 4;  // the MLP's hidden width is mlp_ratio * embed_dim
  double drop_path_rate = 0.1;
  double mask_ratio = 0.1;  // > 0: training masks (always 10 %, as vit.py does)
  bool checkpoint = false;  // vit.py's using_checkpoint: blocks recompute in the backward
  std::int64_t embedding_size = 512;
  // The activations' and products' types (model_context.h): f32; f16 for the CUDA backend's
  // fp16 mode and bf16 products for the CPU's (f32 masters); f64 for an f64 run, where the
  // masters, gradients, batch-norm statistics and running buffers are f64 too.
  NetworkPrecision precision;
};

class VisionTransformer final : public Backbone {
 public:
  // The share of tokens vit.py's random_masking drops, whatever mask_ratio > 0 says.
  static constexpr double kAppliedMaskRatio = 0.1;

  VisionTransformer(Backend& backend, const VisionTransformerOptions& options);

  Tensor forward(const Tensor& images, ForwardMode mode) override;
  void backward(const Tensor& embeddings_grad) override;
  GraphValue trace(InferenceGraph& graph, GraphValue images) const override;
  void set_draw_position(const DrawPosition& at) override { position_ = at; }
  // The draws of the next training forward, instead of pfc's own (`pfc golden` replays
  // arcface_torch's). Checked against the batch when that forward runs.
  void replay_draws(VitDraws draws) { replayed_ = std::move(draws); }

  // vit.py's initialisation, drawn from the counter RNG keyed by (seed, name): Linear weights
  // and pos_embed N(0, 0.02) (timm's trunc_normal_ cuts at +-2, 100 standard deviations),
  // mask_token N(0, 0.02), Linear biases 0, LayerNorm and BatchNorm scale 1 and shift 0, the
  // patch convolution PyTorch's default U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias.
  void initialize(std::uint64_t seed) override;

  std::string describe() const override;
  DType master_dtype() const override { return ctx_.master_dtype(); }
  std::int64_t image_size() const override { return options_.image_size; }
  std::int64_t embedding_size() const override { return options_.embedding_size; }
  Backend& backend() const override { return *ctx_.backend; }
  const std::vector<Parameter*>& parameters() const override { return parameters_; }
  const std::vector<Buffer*>& buffers() const override { return buffers_; }

  const VisionTransformerOptions& options() const { return options_; }
  std::int64_t tokens() const { return grid_ * grid_; }
  // Tokens a masked training forward keeps: int(tokens * 0.9), 129 of 144.
  std::int64_t kept_tokens() const;
  // DropPath rate of each block: torch.linspace(0, drop_path_rate, depth), in float32 (float64
  // in an f64 run).
  std::vector<double> drop_path_rates() const;

 private:
  Tensor in_type(const Tensor& x, DType dtype) const;
  Tensor index_tensor(const std::vector<std::int64_t>& rows) const;
  VitDraws draws_for(std::int64_t samples);

  ModelContext ctx_;
  ModelContext head_ctx_;
  VisionTransformerOptions options_;
  std::int64_t grid_;
  Parameter pos_embed_, mask_token_;
  Conv2d patch_;
  Parameter patch_bias_;
  std::vector<std::unique_ptr<VitBlock>> blocks_;
  LayerNorm norm_;
  TokenLinear feature0_;
  BatchNorm feature1_;
  TokenLinear feature2_;
  BatchNorm feature3_;
  std::vector<Parameter*> parameters_;
  std::vector<Buffer*> buffers_;

  DrawPosition position_;
  std::optional<VitDraws> replayed_;
  // The last training forward: its batch and masking, for the backward.
  std::int64_t samples_ = 0;
  bool masked_ = false;
  Tensor kept_rows_, dropped_rows_;  // i64 on the device
};

// A UsageError naming the key and its allowed values when the options cannot make a network.
void check_vision_transformer_options(const VisionTransformerOptions& o);

}  // namespace pfc
