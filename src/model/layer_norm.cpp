#include "model/layer_norm.h"

namespace pfc {

namespace {

DType statistics_type(DType activations) {
  return activations == DType::f16 ? DType::f32 : activations;
}

}  // namespace

LayerNorm::LayerNorm(const ModelContext& ctx, const std::string& name, std::int64_t width)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(),
                              name + ".weight", {width}, {width}, TorchLayout::same)),
      bias(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(), name + ".bias",
                            {width}, {width}, TorchLayout::same)),
      ctx_(ctx),
      width_(width) {
  ctx.backend->fill(weight.value, 1.0);
  ctx.backend->fill(bias.value, 0.0);
}

Tensor LayerNorm::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.rank() == 2 && x.dim(1) == width_, "{}: input {} is not [rows, {}]", weight.name,
            x.describe(), width_);
  Backend& be = *ctx_.backend;
  const DType stats = statistics_type(x.dtype());
  Tensor y = be.empty(x.shape(), x.dtype(), MemoryPurpose::activations);
  Tensor mean = be.empty({x.dim(0)}, stats, MemoryPurpose::activations);
  Tensor invstd = be.empty({x.dim(0)}, stats, MemoryPurpose::activations);
  be.layernorm_forward(x, weight.value, bias.value, kEps, y, mean, invstd);
  if (mode == ForwardMode::training) {
    saved_input_ = x;
    saved_mean_ = mean;
    saved_invstd_ = invstd;
  }
  return y;
}

Tensor LayerNorm::backward(const Tensor& dy) {
  PFC_CHECK(saved_input_.defined(), "{}: backward without a training forward", weight.name);
  Backend& be = *ctx_.backend;
  Tensor dx = be.empty(saved_input_.shape(), saved_input_.dtype(), MemoryPurpose::activations);
  be.layernorm_backward(dy, saved_input_, weight.value, saved_mean_, saved_invstd_, dx,
                        weight.grad, bias.grad);
  release();
  return dx;
}

void LayerNorm::release() {
  saved_input_ = Tensor();
  saved_mean_ = Tensor();
  saved_invstd_ = Tensor();
}

void LayerNorm::collect(std::vector<Parameter*>& parameters) {
  parameters.insert(parameters.end(), {&weight, &bias});
}

GraphValue LayerNorm::trace(InferenceGraph& graph, GraphValue x) const {
  Backend& be = *ctx_.backend;
  return graph.layer_norm(x, torch_named_value(be, weight), torch_named_value(be, bias), kEps);
}

}  // namespace pfc
