#include "model/depthwise_block.h"

namespace pfc {

namespace {

DepthWiseShape checked(const DepthWiseShape& s, const std::string& name) {
  PFC_CHECK(!s.residual || (s.stride == 1 && s.in_channels == s.out_channels &&
                            s.kernel == 2 * s.pad + 1),
            "{}: a residual DepthWise keeps the shape (stride 1, in = out, same padding), got "
            "{} -> {} channels, kernel {} stride {} pad {}",
            name, s.in_channels, s.out_channels, s.kernel, s.stride, s.pad);
  return s;
}

ConvShape expand(const DepthWiseShape& s) { return {s.in_channels, s.width, 1, 1, 0, 1}; }
ConvShape depthwise(const DepthWiseShape& s) {
  return {s.width, s.width, s.kernel, s.stride, s.pad, s.width};
}
ConvShape project(const DepthWiseShape& s) { return {s.width, s.out_channels, 1, 1, 0, 1}; }

}  // namespace

DepthWise::DepthWise(const ModelContext& ctx, const std::string& name,
                     const DepthWiseShape& shape)
    : ctx_(ctx),
      residual_(checked(shape, name).residual),
      expand_(ctx, name + ".layers.0", expand(shape), ConvBlock::Activation::prelu),
      depthwise_(ctx, name + ".layers.1", depthwise(shape), ConvBlock::Activation::prelu),
      project_(ctx, name + ".layers.2", project(shape), ConvBlock::Activation::none) {}

Tensor DepthWise::forward(const Tensor& x, ForwardMode mode) {
  Tensor y = project_.forward(depthwise_.forward(expand_.forward(x, mode), mode), mode);
  if (residual_) ctx_.backend->add(y, x, y);
  return y;
}

Tensor DepthWise::backward(const Tensor& dy) {
  Tensor dx = expand_.backward(depthwise_.backward(project_.backward(dy)));
  if (residual_) ctx_.backend->add(dx, dy, dx);
  return dx;
}

GraphValue DepthWise::trace(InferenceGraph& graph, GraphValue x) const {
  const GraphValue y = project_.trace(graph, depthwise_.trace(graph, expand_.trace(graph, x)));
  return residual_ ? graph.add(y, x) : y;
}

void DepthWise::release() {
  expand_.release();
  depthwise_.release();
  project_.release();
}

void DepthWise::collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers) {
  expand_.collect(parameters, buffers);
  depthwise_.collect(parameters, buffers);
  project_.collect(parameters, buffers);
}

}  // namespace pfc
