// MobileFaceNet's DepthWise unit (arcface_torch's backbones/mobilefacenet.py), an inverted
// bottleneck: a 1x1 ConvBlock widening in -> `width` channels, a depthwise k x k ConvBlock over
// those `width` channels (groups = width) with the unit's stride, and a 1x1 LinearBlock
// narrowing to out; with `residual`, the input is added to the result (stride 1, in = out:
// the units of a Residual stage). Tensors NAME.layers.{0,1,2}.*, as in PyTorch's state_dict.
#pragma once

#include <string>
#include <vector>

#include "model/conv_block.h"

namespace pfc {

struct DepthWiseShape {
  std::int64_t in_channels = 0, out_channels = 0;
  std::int64_t width = 0;  // arcface_torch's `groups`: the channels the depthwise conv sees
  std::int64_t kernel = 3, stride = 2, pad = 1;
  bool residual = false;
};

class DepthWise {
 public:
  DepthWise(const ModelContext& ctx, const std::string& name, const DepthWiseShape& shape);

  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  void collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  ModelContext ctx_;
  bool residual_;
  ConvBlock expand_, depthwise_, project_;
};

}  // namespace pfc
