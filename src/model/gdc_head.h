// MobileFaceNet's embedding head, arcface_torch's GDC ("global depthwise convolution"): a 7x7
// depthwise LinearBlock that turns the [n, 7, 7, channels] map into one value per channel,
// then Linear(channels -> embedding, bias=False) and BatchNorm1d(embedding), whose scale
// trains (unlike iresnet's `features`). Tensors features.layers.{0,2,3}.* (1 is the flatten).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/batch_norm.h"
#include "model/conv_block.h"
#include "model/linear.h"

namespace pfc {

class GdcHead {
 public:
  static constexpr std::int64_t kMapSize = 7;

  // `ctx` is the head's: f32 (f64 in an f64 run), as arcface_torch runs it outside autocast.
  GdcHead(const ModelContext& ctx, const std::string& name, std::int64_t channels,
          std::int64_t embedding_size);

  // x [n, 7, 7, channels] -> embeddings [n, embedding_size].
  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  void collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  std::string name_;
  std::int64_t channels_;
  ConvBlock gdc_;
  FlattenLinear linear_;
  BatchNorm bn_;
};

}  // namespace pfc
