#include "model/conv2d.h"

namespace pfc {

Conv2d::Conv2d(const ModelContext& ctx, const std::string& name, std::int64_t in_channels,
               std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
               std::int64_t pad, std::int64_t groups)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.product_dtype,
                              name + ".weight",
                              {out_channels, kernel, kernel, in_channels / groups},
                              {out_channels, in_channels / groups, kernel, kernel},
                              TorchLayout::conv_oihw)),
      ctx_(ctx),
      in_channels_(in_channels),
      out_channels_(out_channels),
      kernel_(kernel),
      stride_(stride),
      pad_(pad),
      groups_(groups) {
  PFC_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0,
            "{}: {} groups do not divide {} input and {} output channels", weight.name, groups,
            in_channels, out_channels);
}

Conv2dGeometry Conv2d::geometry_for(const Tensor& x) const {
  PFC_CHECK(x.rank() == 4 && x.dim(3) == in_channels_, "{}: input {} is not [n, h, w, {}]",
            weight.name, x.describe(), in_channels_);
  Conv2dGeometry g;
  g.batch = x.dim(0);
  g.in_h = x.dim(1);
  g.in_w = x.dim(2);
  g.in_channels = in_channels_;
  g.out_channels = out_channels_;
  g.kernel = kernel_;
  g.stride = stride_;
  g.pad = pad_;
  g.groups = groups_;
  return g;
}

// In fp16 mode the convolution reads the working copy (f16, or bf16 on the CPU) of the f32
// master weight.
const Tensor& Conv2d::compute_weight() const {
  return ctx_.uses_working_copies() ? weight.working : weight.value;
}

Tensor Conv2d::forward(const Tensor& x, ForwardMode mode) {
  const Conv2dGeometry g = geometry_for(x);
  Tensor y = ctx_.activation(g.output_shape());
  const Tensor operand = ctx_.operand(x);
  ctx_.backend->conv2d_forward(g, operand, compute_weight(), y);
  if (mode == ForwardMode::training) saved_input_ = operand;
  return y;
}

Tensor Conv2d::backward(const Tensor& dy, bool need_input_grad) {
  const Conv2dGeometry g = geometry_for(saved_input_);
  Backend& be = *ctx_.backend;
  const Tensor dy_operand = ctx_.operand(dy);
  // The products accumulate into the activations' type: f16 on cuda, cast to the f32 master
  // gradient; bf16 products write f32, the gradient itself.
  if (ctx_.activation_dtype != weight.grad.dtype()) {
    Tensor dw = be.empty(g.filter_shape(), ctx_.activation_dtype, MemoryPurpose::gradients);
    be.conv2d_backward_filter(g, saved_input_, dy_operand, dw);
    be.cast(dw, weight.grad);
  } else {
    be.conv2d_backward_filter(g, saved_input_, dy_operand, weight.grad);
  }
  Tensor dx;
  if (need_input_grad) {
    dx = ctx_.activation(g.input_shape());
    be.conv2d_backward_data(g, dy_operand, compute_weight(), dx);
  }
  saved_input_ = Tensor();
  return dx;
}

void Conv2d::release() { saved_input_ = Tensor(); }

GraphValue Conv2d::trace(InferenceGraph& graph, GraphValue x, const NamedTensor* bias) const {
  return graph.convolution(x, torch_named_value(*ctx_.backend, weight), bias,
                           ConvolutionSpec{kernel_, stride_, pad_, groups_});
}

}  // namespace pfc
