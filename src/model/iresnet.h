// arcface_torch's IResNet (iresnet18 ... iresnet200, or any depths and widths for tests), a
// Backbone: images [n, s, s, 3] -> embeddings [n, embedding_size] f32 (f64 in an f64 run),
// with PyTorch's state_dict names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/backbone.h"
#include "model/batch_norm.h"
#include "model/conv2d.h"
#include "model/ibasic_block.h"
#include "model/linear.h"
#include "model/model_context.h"
#include "model/prelu.h"

namespace pfc {

struct IResNetOptions {
  std::vector<std::int64_t> layers{3, 4, 14, 3};
  std::vector<std::int64_t> widths{64, 128, 256, 512};
  std::int64_t image_size = 112;
  std::int64_t embedding_size = 512;
  // The activations' and products' types (model_context.h): f32; f16 for the CUDA backend's
  // fp16 mode and bf16 products for the CPU's (f32 masters); f64 for an f64 run, where the
  // masters, gradients, batch-norm statistics and running buffers are f64 too.
  NetworkPrecision precision;
};

class IResNet final : public Backbone {
 public:
  IResNet(Backend& backend, const IResNetOptions& options);

  Tensor forward(const Tensor& images, ForwardMode mode) override;
  void backward(const Tensor& embeddings_grad) override;
  GraphValue trace(InferenceGraph& graph, GraphValue images) const override;

  // arcface_torch's initialisation, drawn from the counter RNG keyed by (seed, name):
  // conv N(0, 0.1), BN scale 1 and shift 0, Linear U(+-1/sqrt(fan_in)), PReLU 0.25.
  void initialize(std::uint64_t seed) override;

  std::string describe() const override;
  DType master_dtype() const override { return ctx_.master_dtype(); }
  std::int64_t image_size() const override { return options_.image_size; }
  std::int64_t embedding_size() const override { return options_.embedding_size; }
  Backend& backend() const override { return *ctx_.backend; }
  const std::vector<Parameter*>& parameters() const override { return parameters_; }
  const std::vector<Buffer*>& buffers() const override { return buffers_; }

  const IResNetOptions& options() const { return options_; }

 private:
  ModelContext ctx_;
  IResNetOptions options_;
  Conv2d conv1_;
  BatchNorm bn1_;
  PRelu prelu_;
  std::vector<std::unique_ptr<IBasicBlock>> blocks_;
  std::unique_ptr<BatchNorm> bn2_;
  std::unique_ptr<FlattenLinear> fc_;
  std::unique_ptr<BatchNorm> features_;
  std::vector<Parameter*> parameters_;
  std::vector<Buffer*> buffers_;
};

}  // namespace pfc
