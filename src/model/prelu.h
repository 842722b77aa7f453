// PReLU with one slope per channel (last dimension), initialised to 0.25 as PyTorch does.
#pragma once

#include <string>
#include <utility>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class PRelu {
 public:
  PRelu(const ModelContext& ctx, const std::string& name, std::int64_t channels);

  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release() { saved_input_ = Tensor(); }
  // As Conv2d's: the owner recomputes the input for the backward instead of it being held.
  void drop_input() { saved_input_ = Tensor(); }
  void restore_input(Tensor x) { saved_input_ = std::move(x); }
  GraphValue trace(InferenceGraph& graph, GraphValue x) const {
    return graph.prelu(x, torch_named_value(*ctx_.backend, weight));
  }

  Parameter weight;

 private:
  ModelContext ctx_;
  std::int64_t channels_;
  Tensor saved_input_;
};

}  // namespace pfc
