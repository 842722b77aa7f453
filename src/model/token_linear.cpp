#include "model/token_linear.h"

namespace pfc {

TokenLinear::TokenLinear(const ModelContext& ctx, const std::string& name,
                         std::int64_t in_features, std::int64_t out_features, bool with_bias)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.product_dtype,
                              name + ".weight", {out_features, in_features},
                              {out_features, in_features}, TorchLayout::same)),
      bias(with_bias ? create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(),
                                        name + ".bias", {out_features}, {out_features},
                                        TorchLayout::same)
                     : Parameter{}),
      ctx_(ctx),
      in_features_(in_features),
      out_features_(out_features),
      with_bias_(with_bias) {}

const Tensor& TokenLinear::compute_weight() const {
  return ctx_.uses_working_copies() ? weight.working : weight.value;
}

Tensor TokenLinear::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.rank() == 2 && x.dim(1) == in_features_ && x.dtype() == ctx_.activation_dtype,
            "{}: input {} is not [rows, {}] of {}", weight.name, x.describe(), in_features_,
            dtype_name(ctx_.activation_dtype));
  Backend& be = *ctx_.backend;
  Tensor y = ctx_.activation({x.dim(0), out_features_});
  const Tensor operand = ctx_.operand(x);
  be.gemm(false, true, 1.0, operand, compute_weight(), 0.0, y);
  if (with_bias_) be.add_row_vector(y, bias.value);
  if (mode == ForwardMode::training) saved_input_ = operand;
  return y;
}

Tensor TokenLinear::backward(const Tensor& dy) {
  PFC_CHECK(saved_input_.defined(), "{}: backward without a training forward", weight.name);
  Backend& be = *ctx_.backend;
  const Tensor dy_operand = ctx_.operand(dy);
  // As Conv2d's: f16 products write f16, cast to the master gradient; bf16 ones write f32.
  if (ctx_.activation_dtype != weight.grad.dtype()) {
    Tensor dw = be.empty(weight.value.shape(), ctx_.activation_dtype, MemoryPurpose::gradients);
    be.gemm(true, false, 1.0, dy_operand, saved_input_, 0.0, dw);
    be.cast(dw, weight.grad);
  } else {
    be.gemm(true, false, 1.0, dy_operand, saved_input_, 0.0, weight.grad);
  }
  if (with_bias_) be.sum_rows(dy, bias.grad);
  Tensor dx = ctx_.activation({dy.dim(0), in_features_});
  be.gemm(false, false, 1.0, dy_operand, compute_weight(), 0.0, dx);
  release();
  return dx;
}

void TokenLinear::collect(std::vector<Parameter*>& parameters) {
  parameters.push_back(&weight);
  if (with_bias_) parameters.push_back(&bias);
}

GraphValue TokenLinear::trace(InferenceGraph& graph, GraphValue x) const {
  const NamedTensor w = torch_named_value(*ctx_.backend, weight);
  if (!with_bias_) return graph.linear(x, w, nullptr);
  const NamedTensor b = torch_named_value(*ctx_.backend, bias);
  return graph.linear(x, w, &b);
}

}  // namespace pfc
