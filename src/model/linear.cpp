#include "model/linear.h"

namespace pfc {

FlattenLinear::FlattenLinear(const ModelContext& ctx, const std::string& name,
                             std::int64_t channels, std::int64_t height, std::int64_t width,
                             std::int64_t out_features, bool with_bias)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.head_dtype(),
                              name + ".weight", {out_features, channels * height * width},
                              {out_features, channels * height * width},
                              TorchLayout::linear_from_nchw)),
      bias(with_bias ? create_parameter(*ctx.backend, ctx.master_dtype(), ctx.head_dtype(),
                                        name + ".bias", {out_features}, {out_features},
                                        TorchLayout::same)
                     : Parameter{}),
      ctx_(ctx),
      compute_(ctx.head_dtype()),
      in_features_(channels * height * width),
      out_features_(out_features),
      with_bias_(with_bias) {
  weight.feature_channels = channels;
  weight.feature_hw = height * width;
}

Tensor FlattenLinear::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.numel() % in_features_ == 0 && x.rank() == 4, "{}: input {} does not flatten to {}",
            weight.name, x.describe(), in_features_);
  Backend& be = *ctx_.backend;
  const std::int64_t n = x.dim(0);
  Tensor x2d = x.reshape({n, in_features_});
  if (x.dtype() != compute_) {
    Tensor converted = be.empty({n, in_features_}, compute_, MemoryPurpose::activations);
    be.cast(x2d, converted);
    x2d = converted;
  }
  Tensor y = be.empty({n, out_features_}, compute_, MemoryPurpose::activations);
  be.gemm(false, true, 1.0, x2d, weight.value, 0.0, y);
  if (with_bias_) be.add_row_vector(y, bias.value);
  if (mode == ForwardMode::training) {
    input_shape_ = x.shape();
    saved_input_ = x2d;
  }
  return y;
}

Tensor FlattenLinear::backward(const Tensor& dy) {
  Backend& be = *ctx_.backend;
  be.gemm(true, false, 1.0, dy, saved_input_, 0.0, weight.grad);
  if (with_bias_) be.sum_rows(dy, bias.grad);
  Tensor dx = be.empty({dy.dim(0), in_features_}, compute_, MemoryPurpose::activations);
  be.gemm(false, false, 1.0, dy, weight.value, 0.0, dx);
  release();
  if (ctx_.activation_dtype == compute_) return dx.reshape(input_shape_);
  Tensor converted = ctx_.activation(input_shape_);
  be.cast(dx.reshape(input_shape_), converted);
  return converted;
}

void FlattenLinear::collect(std::vector<Parameter*>& parameters) {
  parameters.push_back(&weight);
  if (with_bias_) parameters.push_back(&bias);
}

GraphValue FlattenLinear::trace(InferenceGraph& graph, GraphValue x) const {
  const GraphValue flat = graph.flatten(x);
  const NamedTensor w = torch_named_value(*ctx_.backend, weight);
  if (!with_bias_) return graph.linear(flat, w, nullptr);
  const NamedTensor b = torch_named_value(*ctx_.backend, bias);
  return graph.linear(flat, w, &b);
}

}  // namespace pfc
