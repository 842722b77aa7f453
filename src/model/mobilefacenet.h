// arcface_torch's MobileFaceNet (`get_mbf`: blocks (1, 4, 6, 2), scale 2; `get_mbf_large`:
// (2, 8, 12, 4), scale 4): images [n, 112, 112, 3] -> embeddings [n, embedding_size].
//   layers.0    ConvBlock 3 -> 64*scale, 3x3 stride 2
//   layers.1    blocks[0] == 1: ConvBlock 3x3 in 64 groups; else a Residual stage (width 128)
//   layers.2    DepthWise stride 2, width 128          layers.3  Residual, blocks[1], width 128
//   layers.4    DepthWise -> 128*scale, stride 2, width 256
//   layers.5    Residual, blocks[2], width 256
//   layers.6    DepthWise stride 2, width 512          layers.7  Residual, blocks[3], width 256
//   conv_sep    ConvBlock 1x1 -> 512                   features  GdcHead (7x7 depthwise, Linear,
//                                                                BatchNorm1d)
// As in arcface_torch, conv_sep and features compute in f32 even in fp16 mode (outside its
// autocast). The GDC needs the 7x7 map that four stride-2 stages leave of 112x112 images.
// Parameters and buffers carry PyTorch's state_dict names. It is a Backbone: the trainer,
// checkpoints, verification, embedding and export take it as they take an iresnet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/backbone.h"
#include "model/conv_block.h"
#include "model/depthwise_block.h"
#include "model/gdc_head.h"
#include "model/model_context.h"

namespace pfc {

struct MobileFaceNetOptions {
  std::vector<std::int64_t> blocks{1, 4, 6, 2};  // units of the four residual stages
  std::int64_t scale = 2;                        // channel multiplier (64 * scale, 128 * scale)
  std::int64_t image_size = 112;
  std::int64_t embedding_size = 512;
  // The activations' and products' types (model_context.h): f32; f16 for the CUDA backend's
  // fp16 mode and bf16 products for the CPU's (f32 masters); f64 for an f64 run, where the
  // masters, gradients, batch-norm statistics and running buffers are f64 too.
  NetworkPrecision precision;
};

class MobileFaceNet final : public Backbone {
 public:
  static constexpr std::int64_t kImageSize = 112;

  MobileFaceNet(Backend& backend, const MobileFaceNetOptions& options);

  // images: [n, 112, 112, 3] on the backend's device, f32, f16 or f64.
  Tensor forward(const Tensor& images, ForwardMode mode) override;
  void backward(const Tensor& embeddings_grad) override;
  GraphValue trace(InferenceGraph& graph, GraphValue images) const override;

  // arcface_torch's initialisation, drawn from the counter RNG keyed by (seed, name):
  // convolutions and the linear layer N(0, sqrt(2 / fan_out)) (kaiming_normal_, fan_out,
  // relu), batch-norm scale 1 and shift 0, PReLU 0.25.
  void initialize(std::uint64_t seed) override;

  std::string describe() const override;
  DType master_dtype() const override { return ctx_.master_dtype(); }
  std::int64_t image_size() const override { return options_.image_size; }
  std::int64_t embedding_size() const override { return options_.embedding_size; }
  Backend& backend() const override { return *ctx_.backend; }
  const std::vector<Parameter*>& parameters() const override { return parameters_; }
  const std::vector<Buffer*>& buffers() const override { return buffers_; }

  const MobileFaceNetOptions& options() const { return options_; }

 private:
  ModelContext ctx_;       // layers.*: the activation type
  ModelContext head_ctx_;  // conv_sep and features: the master type (f32, or f64)
  MobileFaceNetOptions options_;
  ConvBlock stem_;                              // layers.0
  std::unique_ptr<ConvBlock> grouped_;          // layers.1 when blocks[0] == 1
  std::vector<std::unique_ptr<DepthWise>> units_;  // every DepthWise of layers.1 ... layers.7
  ConvBlock conv_sep_;
  GdcHead features_;
  std::vector<Parameter*> parameters_;
  std::vector<Buffer*> buffers_;
};

}  // namespace pfc
