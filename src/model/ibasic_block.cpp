#include "model/ibasic_block.h"

namespace pfc {

IBasicBlock::IBasicBlock(const ModelContext& ctx, const std::string& name,
                         std::int64_t in_channels, std::int64_t channels, std::int64_t stride)
    : ctx_(ctx),
      bn1_(ctx, name + ".bn1", in_channels),
      conv1_(ctx, name + ".conv1", in_channels, channels, 3, 1, 1),
      bn2_(ctx, name + ".bn2", channels),
      prelu_(ctx, name + ".prelu", channels),
      conv2_(ctx, name + ".conv2", channels, channels, 3, stride, 1),
      bn3_(ctx, name + ".bn3", channels) {
  if (stride != 1 || in_channels != channels) {
    downsample_conv_ =
        std::make_unique<Conv2d>(ctx, name + ".downsample.0", in_channels, channels, 1, stride, 0);
    downsample_bn_ = std::make_unique<BatchNorm>(ctx, name + ".downsample.1", channels);
  }
}

Tensor IBasicBlock::forward(const Tensor& x, ForwardMode mode) {
  Tensor out = bn3_.forward(
      conv2_.forward(
          prelu_.forward(bn2_.forward(conv1_.forward(bn1_.forward(x, mode), mode), mode), mode),
          mode),
      mode);
  // The outputs of bn1 and bn2 are not held for the backward: bn1 and bn2 keep their inputs
  // and statistics, from which one elementwise pass remakes them (two activations of the
  // block's width fewer held from the forward to the backward). conv1 holding a bf16 copy of
  // bn1's output instead (bf16 products beside f32 activations) keeps it: half the bytes, where
  // remaking it would take a batch-norm pass and a cast.
  if (mode == ForwardMode::training) {
    if (!conv1_keeps_copy()) conv1_.drop_input();
    prelu_.drop_input();
  }
  const Tensor shortcut =
      downsample_conv_ ? downsample_bn_->forward(downsample_conv_->forward(x, mode), mode) : x;
  ctx_.backend->add(out, shortcut, out);
  return out;
}

Tensor IBasicBlock::backward(const Tensor& dy) {
  Tensor d = conv2_.backward(bn3_.backward(dy));
  prelu_.restore_input(bn2_.recompute_output());
  d = bn2_.backward(prelu_.backward(d));
  if (!conv1_keeps_copy()) conv1_.restore_input(bn1_.recompute_output());
  Tensor dx = bn1_.backward(conv1_.backward(d));
  if (downsample_conv_) {
    ctx_.backend->add(dx, downsample_conv_->backward(downsample_bn_->backward(dy)), dx);
  } else {
    ctx_.backend->add(dx, dy, dx);
  }
  return dx;
}

GraphValue IBasicBlock::trace(InferenceGraph& graph, GraphValue x) const {
  GraphValue out = bn1_.trace(graph, x);
  out = prelu_.trace(graph, bn2_.trace(graph, conv1_.trace(graph, out)));
  out = bn3_.trace(graph, conv2_.trace(graph, out));
  const GraphValue shortcut =
      downsample_conv_ ? downsample_bn_->trace(graph, downsample_conv_->trace(graph, x)) : x;
  return graph.add(out, shortcut);
}

void IBasicBlock::release() {
  bn1_.release();
  conv1_.release();
  bn2_.release();
  prelu_.release();
  conv2_.release();
  bn3_.release();
  if (downsample_conv_) {
    downsample_conv_->release();
    downsample_bn_->release();
  }
}

void IBasicBlock::collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers) {
  // PyTorch's module order: bn1, conv1, bn2, prelu, conv2, bn3, downsample.
  bn1_.collect(parameters, buffers);
  parameters.push_back(&conv1_.weight);
  bn2_.collect(parameters, buffers);
  parameters.push_back(&prelu_.weight);
  parameters.push_back(&conv2_.weight);
  bn3_.collect(parameters, buffers);
  if (downsample_conv_) {
    parameters.push_back(&downsample_conv_->weight);
    downsample_bn_->collect(parameters, buffers);
  }
}

}  // namespace pfc
