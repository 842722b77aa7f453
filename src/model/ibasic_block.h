// arcface_torch's IBasicBlock: BN -> conv3x3 -> BN -> PReLU -> conv3x3(stride) -> BN, plus
// the shortcut (identity, or conv1x1(stride) + BN when the shape changes); no activation
// after the sum.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/batch_norm.h"
#include "model/conv2d.h"
#include "model/prelu.h"

namespace pfc {

class IBasicBlock {
 public:
  IBasicBlock(const ModelContext& ctx, const std::string& name, std::int64_t in_channels,
              std::int64_t channels, std::int64_t stride);

  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

  void collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers);

 private:
  // conv1 keeps its own copy of its input in the products' type (bf16 beside f32 activations)
  // rather than bn1's output itself.
  bool conv1_keeps_copy() const { return ctx_.product_dtype != ctx_.activation_dtype; }

  ModelContext ctx_;
  BatchNorm bn1_;
  Conv2d conv1_;
  BatchNorm bn2_;
  PRelu prelu_;
  Conv2d conv2_;
  BatchNorm bn3_;
  std::unique_ptr<Conv2d> downsample_conv_;
  std::unique_ptr<BatchNorm> downsample_bn_;
};

}  // namespace pfc
