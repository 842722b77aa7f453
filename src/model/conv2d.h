// Conv2d without bias (every convolution of iresnet and MobileFaceNet): NHWC in, NHWC out,
// OHWI filter; grouped (PyTorch's `groups`, depthwise when it equals the channels) or not.
#pragma once

#include <string>
#include <utility>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class Conv2d {
 public:
  Conv2d(const ModelContext& ctx, const std::string& name, std::int64_t in_channels,
         std::int64_t out_channels, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
         std::int64_t groups = 1);

  // x [batch, h, w, in]; a training forward keeps x for backward.
  Tensor forward(const Tensor& x, ForwardMode mode);
  // Writes weight.grad; returns dx unless `need_input_grad` is false (the stem's image input).
  Tensor backward(const Tensor& dy, bool need_input_grad = true);
  void release();
  // Forgets the input a training forward kept, which the owner hands back with restore_input
  // before backward: a block that recomputes the input instead of holding it.
  void drop_input() { saved_input_ = Tensor(); }
  void restore_input(const Tensor& x) { saved_input_ = ctx_.operand(x); }
  // The convolution in inference mode (model/inference_graph.h), with the bias its owner
  // adds after it where there is one (the Vision Transformer's patch embedding).
  GraphValue trace(InferenceGraph& graph, GraphValue x, const NamedTensor* bias = nullptr) const;

  Parameter weight;

 private:
  Conv2dGeometry geometry_for(const Tensor& x) const;
  const Tensor& compute_weight() const;

  ModelContext ctx_;
  std::int64_t in_channels_, out_channels_, kernel_, stride_, pad_, groups_;
  Tensor saved_input_;
};

}  // namespace pfc
