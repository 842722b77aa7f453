#include "model/gdc_head.h"

namespace pfc {

GdcHead::GdcHead(const ModelContext& ctx, const std::string& name, std::int64_t channels,
                 std::int64_t embedding_size)
    : name_(name),
      channels_(channels),
      gdc_(ctx, name + ".layers.0", {channels, channels, kMapSize, 1, 0, channels},
           ConvBlock::Activation::none),
      linear_(ctx, name + ".layers.2", channels, 1, 1, embedding_size, /*with_bias=*/false),
      bn_(ctx, name + ".layers.3", embedding_size) {}

Tensor GdcHead::forward(const Tensor& x, ForwardMode mode) {
  PFC_CHECK(x.rank() == 4 && x.dim(1) == kMapSize && x.dim(2) == kMapSize && x.dim(3) == channels_,
            "{}: input {} is not [n, {}, {}, {}] (the GDC is a {}x{} convolution)", name_,
            x.describe(), kMapSize, kMapSize, channels_, kMapSize, kMapSize);
  return bn_.forward(linear_.forward(gdc_.forward(x, mode), mode), mode);
}

Tensor GdcHead::backward(const Tensor& dy) {
  return gdc_.backward(linear_.backward(bn_.backward(dy)));
}

GraphValue GdcHead::trace(InferenceGraph& graph, GraphValue x) const {
  return bn_.trace(graph, linear_.trace(graph, gdc_.trace(graph, x)));
}

void GdcHead::release() {
  gdc_.release();
  linear_.release();
  bn_.release();
}

void GdcHead::collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers) {
  gdc_.collect(parameters, buffers);
  linear_.collect(parameters);
  bn_.collect(parameters, buffers);
}

}  // namespace pfc
