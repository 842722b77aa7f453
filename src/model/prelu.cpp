#include "model/prelu.h"

namespace pfc {

PRelu::PRelu(const ModelContext& ctx, const std::string& name, std::int64_t channels)
    : weight(create_parameter(*ctx.backend, ctx.master_dtype(), ctx.master_dtype(),
                              name + ".weight", {channels}, {channels}, TorchLayout::same)),
      ctx_(ctx),
      channels_(channels) {
  ctx.backend->fill(weight.value, 0.25);
}

Tensor PRelu::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.shape().back() == channels_, "{}: input {} has no {} channels", weight.name,
            x.describe(), channels_);
  const Shape rows{x.numel() / channels_, channels_};
  Tensor y = ctx_.backend->empty(x.shape(), x.dtype(), MemoryPurpose::activations);
  Tensor y_rows = y.reshape(rows);
  ctx_.backend->prelu_forward(x.reshape(rows), weight.value, y_rows);
  if (mode == ForwardMode::training) saved_input_ = x;
  return y;
}

Tensor PRelu::backward(const Tensor& dy) {
  const Shape rows{dy.numel() / channels_, channels_};
  Tensor dx = ctx_.backend->empty(dy.shape(), dy.dtype(), MemoryPurpose::activations);
  Tensor dx_rows = dx.reshape(rows);
  ctx_.backend->prelu_backward(dy.reshape(rows), saved_input_.reshape(rows), weight.value, dx_rows,
                               weight.grad);
  release();
  return dx;
}

}  // namespace pfc
