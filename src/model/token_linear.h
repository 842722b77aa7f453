// nn.Linear applied to every row of [rows, in] (a transformer's tokens, or a flattened feature
// vector): y = x Wᵀ (+ b), the weight [out, in] in PyTorch's own layout. It computes in its
// context's activation type, reading the f16 working copy of the f32 master weight in fp16
// mode, as autocast does.
#pragma once

#include <string>
#include <vector>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class TokenLinear {
 public:
  TokenLinear(const ModelContext& ctx, const std::string& name, std::int64_t in_features,
              std::int64_t out_features, bool with_bias);

  // x [rows, in] of the activation type -> [rows, out]; a training forward keeps x.
  Tensor forward(const Tensor& x, ForwardMode mode);
  // Writes the parameters' gradients; returns dx [rows, in].
  Tensor backward(const Tensor& dy);
  void release() { saved_input_ = Tensor(); }
  // weight, then bias where there is one: PyTorch's order.
  void collect(std::vector<Parameter*>& parameters);
  // The Linear in inference mode, over the last dimension of x (model/inference_graph.h).
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

  Parameter weight, bias;

 private:
  const Tensor& compute_weight() const;

  ModelContext ctx_;
  std::int64_t in_features_, out_features_;
  bool with_bias_;
  Tensor saved_input_;
};

}  // namespace pfc
