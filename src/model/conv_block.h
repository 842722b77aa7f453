// MobileFaceNet's two convolution units (arcface_torch's backbones/mobilefacenet.py):
// ConvBlock = Conv2d (no bias) -> BatchNorm2d -> PReLU, and LinearBlock = Conv2d -> BatchNorm2d
// with no activation. Their tensors are NAME.layers.0 (conv), NAME.layers.1 (batch-norm) and,
// for a ConvBlock, NAME.layers.2 (PReLU), as in PyTorch's state_dict.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/batch_norm.h"
#include "model/conv2d.h"
#include "model/prelu.h"

namespace pfc {

// The convolution of a block: channels, square kernel, stride, padding, groups.
struct ConvShape {
  std::int64_t in_channels = 0, out_channels = 0;
  std::int64_t kernel = 1, stride = 1, pad = 0, groups = 1;
};

class ConvBlock {
 public:
  enum class Activation { prelu, none };  // ConvBlock, LinearBlock

  ConvBlock(const ModelContext& ctx, const std::string& name, const ConvShape& shape,
            Activation activation);

  // A training forward keeps what backward needs; an inference one keeps nothing.
  Tensor forward(const Tensor& x, ForwardMode mode);
  // Returns dx unless `need_input_grad` is false (the stem's image input).
  Tensor backward(const Tensor& dy, bool need_input_grad = true);
  void release();
  void collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  Conv2d conv_;
  BatchNorm bn_;
  std::unique_ptr<PRelu> prelu_;  // null in a LinearBlock
};

}  // namespace pfc
