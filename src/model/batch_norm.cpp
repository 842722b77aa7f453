#include "model/batch_norm.h"

namespace pfc {

namespace {
Tensor as_rows(const Tensor& t, std::int64_t channels) {
  return t.reshape({t.numel() / channels, channels});
}
}  // namespace

BatchNorm::BatchNorm(const ModelContext& ctx, const std::string& name, std::int64_t channels,
                     bool trainable_scale, double eps)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(),
                              name + ".weight", {channels}, {channels}, TorchLayout::same)),
      bias(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(), name + ".bias",
                            {channels}, {channels}, TorchLayout::same)),
      running_mean(
          create_buffer(*ctx.backend, ctx.master_dtype(), name + ".running_mean", {channels})),
      running_var(
          create_buffer(*ctx.backend, ctx.master_dtype(), name + ".running_var", {channels})),
      ctx_(ctx),
      channels_(channels),
      eps_(eps) {
  weight.trainable = trainable_scale;
  ctx.backend->fill(weight.value, 1.0);
  ctx.backend->fill(running_var.value, 1.0);
}

Tensor BatchNorm::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.rank() >= 2 && x.shape().back() == channels_, "{}: input {} has no {} channels",
            weight.name, x.describe(), channels_);
  Backend& be = *ctx_.backend;
  Tensor y = be.empty(x.shape(), x.dtype(), MemoryPurpose::activations);
  if (mode == ForwardMode::inference) {
    Tensor y_rows = as_rows(y, channels_);
    be.batchnorm_forward_inference(as_rows(x, channels_), weight.value, bias.value,
                                   running_mean.value, running_var.value, eps_, y_rows);
    return y;
  }
  saved_mean_ = be.empty({channels_}, ctx_.master_dtype(), MemoryPurpose::activations);
  saved_invstd_ = be.empty({channels_}, ctx_.master_dtype(), MemoryPurpose::activations);
  Tensor y_rows = as_rows(y, channels_);
  be.batchnorm_forward_train(as_rows(x, channels_), weight.value, bias.value, running_mean.value,
                             running_var.value, kMomentum, eps_, y_rows, saved_mean_,
                             saved_invstd_);
  saved_input_ = x;
  return y;
}

Tensor BatchNorm::recompute_output() const {
  PFC_CHECK(saved_input_.defined(), "{}: no training forward to recompute", weight.name);
  Backend& be = *ctx_.backend;
  Tensor y = be.empty(saved_input_.shape(), saved_input_.dtype(), MemoryPurpose::activations);
  Tensor y_rows = as_rows(y, channels_);
  be.batchnorm_forward_saved(as_rows(saved_input_, channels_), weight.value, bias.value,
                             saved_mean_, saved_invstd_, y_rows);
  return y;
}

Tensor BatchNorm::backward(const Tensor& dy) {
  Backend& be = *ctx_.backend;
  Tensor dx = be.empty(saved_input_.shape(), saved_input_.dtype(), MemoryPurpose::activations);
  Tensor dx_rows = as_rows(dx, channels_);
  be.batchnorm_backward(as_rows(dy, channels_), as_rows(saved_input_, channels_), weight.value,
                        saved_mean_, saved_invstd_, dx_rows, weight.grad, bias.grad);
  if (!weight.trainable) be.fill(weight.grad, 0.0);
  release();
  return dx;
}

void BatchNorm::collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers) {
  parameters.insert(parameters.end(), {&weight, &bias});
  buffers.insert(buffers.end(), {&running_mean, &running_var});
}

GraphValue BatchNorm::trace(InferenceGraph& graph, GraphValue x) const {
  Backend& be = *ctx_.backend;
  return graph.batch_norm(x, torch_named_value(be, weight), torch_named_value(be, bias),
                          torch_named_value(be, running_mean), torch_named_value(be, running_var),
                          eps_);
}

void BatchNorm::release() {
  saved_input_ = Tensor();
  saved_mean_ = Tensor();
  saved_invstd_ = Tensor();
}

}  // namespace pfc
