// iresnet's `fc`, and the Linear(512 -> emb, bias=False) of MobileFaceNet's GDC head: flattens
// the [n, h, w, c] feature map and applies Linear(c*h*w -> out), with or without bias, in the
// master type: f32 even in fp16 mode (as arcface_torch does), f64 in an f64 run. Its weight is
// exported with PyTorch's NCHW flatten order.
#pragma once

#include <string>
#include <vector>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class FlattenLinear {
 public:
  FlattenLinear(const ModelContext& ctx, const std::string& name, std::int64_t channels,
                std::int64_t height, std::int64_t width, std::int64_t out_features,
                bool with_bias = true);

  // x [n, h, w, c] of the activation dtype -> y [n, out] of the head dtype.
  Tensor forward(const Tensor& x, ForwardMode mode);
  // dy [n, out] as forward's y -> dx [n, h, w, c] of the activation dtype.
  Tensor backward(const Tensor& dy);
  void release() { saved_input_ = Tensor(); }
  // weight, then bias unless there is none, in PyTorch's order.
  void collect(std::vector<Parameter*>& parameters);
  // Flatten, then Linear with PyTorch's [out, c*h*w] weight (and bias, where there is one).
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

  Parameter weight, bias;  // bias: no tensors when built without one

 private:
  ModelContext ctx_;
  DType compute_;
  std::int64_t in_features_, out_features_;
  bool with_bias_;
  Shape input_shape_;
  Tensor saved_input_;  // [n, in] in the compute dtype
};

}  // namespace pfc
