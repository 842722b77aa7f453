#include "model/vit_mlp.h"

namespace pfc {

VitMlp::VitMlp(const ModelContext& ctx, const std::string& name, std::int64_t width,
               std::int64_t hidden)
    : ctx_(ctx),
      fc1_(ctx, name + ".fc1", width, hidden, /*with_bias=*/true),
      fc2_(ctx, name + ".fc2", hidden, width, /*with_bias=*/true) {}

Tensor VitMlp::forward(const Tensor& x, ForwardMode mode) {
  Tensor h = fc1_.forward(x, mode);
  ctx_.backend->relu6_forward(h, h);
  if (mode == ForwardMode::training) saved_hidden_ = h;
  return fc2_.forward(h, mode);
}

Tensor VitMlp::backward(const Tensor& dy) {
  PFC_CHECK(saved_hidden_.defined(), "mlp: backward without a training forward");
  Tensor dh = fc2_.backward(dy);
  ctx_.backend->relu6_backward(dh, saved_hidden_, dh);
  saved_hidden_ = Tensor();
  return fc1_.backward(dh);
}

void VitMlp::release() {
  saved_hidden_ = Tensor();
  fc1_.release();
  fc2_.release();
}

void VitMlp::collect(std::vector<Parameter*>& parameters) {
  fc1_.collect(parameters);
  fc2_.collect(parameters);
}

GraphValue VitMlp::trace(InferenceGraph& graph, GraphValue x) const {
  return fc2_.trace(graph, graph.relu6(fc1_.trace(graph, x)));
}

}  // namespace pfc
