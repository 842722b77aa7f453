// torch.nn.LayerNorm over the last dimension of [rows, width] activations: the Vision
// Transformer's norm1, norm2 and norm. Its weight and bias are in the master type (f32; f64 in
// an f64 run); the per-row statistics a training forward keeps for the backward are f32 beside
// f16 activations, else the activations' type.
#pragma once

#include <string>
#include <vector>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class LayerNorm {
 public:
  static constexpr double kEps = 1e-5;  // nn.LayerNorm's default, which vit.py keeps

  LayerNorm(const ModelContext& ctx, const std::string& name, std::int64_t width);

  // x [rows, width] -> y of x's shape and type.
  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  void collect(std::vector<Parameter*>& parameters);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

  Parameter weight, bias;

 private:
  ModelContext ctx_;
  std::int64_t width_;
  Tensor saved_input_, saved_mean_, saved_invstd_;
};

}  // namespace pfc
