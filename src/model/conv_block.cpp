#include "model/conv_block.h"

namespace pfc {

ConvBlock::ConvBlock(const ModelContext& ctx, const std::string& name, const ConvShape& shape,
                     Activation activation)
    : conv_(ctx, name + ".layers.0", shape.in_channels, shape.out_channels, shape.kernel,
            shape.stride, shape.pad, shape.groups),
      bn_(ctx, name + ".layers.1", shape.out_channels) {
  if (activation == Activation::prelu)
    prelu_ = std::make_unique<PRelu>(ctx, name + ".layers.2", shape.out_channels);
}

Tensor ConvBlock::forward(const Tensor& x, ForwardMode mode) {
  Tensor y = bn_.forward(conv_.forward(x, mode), mode);
  return prelu_ ? prelu_->forward(y, mode) : y;
}

Tensor ConvBlock::backward(const Tensor& dy, bool need_input_grad) {
  const Tensor d = prelu_ ? prelu_->backward(dy) : dy;
  return conv_.backward(bn_.backward(d), need_input_grad);
}

void ConvBlock::release() {
  conv_.release();
  bn_.release();
  if (prelu_) prelu_->release();
}

GraphValue ConvBlock::trace(InferenceGraph& graph, GraphValue x) const {
  const GraphValue y = bn_.trace(graph, conv_.trace(graph, x));
  return prelu_ ? prelu_->trace(graph, y) : y;
}

void ConvBlock::collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers) {
  parameters.push_back(&conv_.weight);
  bn_.collect(parameters, buffers);
  if (prelu_) parameters.push_back(&prelu_->weight);
}

}  // namespace pfc
