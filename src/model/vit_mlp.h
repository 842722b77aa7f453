// vit.py's Mlp: fc1 = Linear(width -> hidden), ReLU6 (in place: its backward reads the output),
// fc2 = Linear(hidden -> width); both with bias. vit.py's dropout is 0 and is left out.
#pragma once

#include <string>
#include <vector>

#include "model/token_linear.h"

namespace pfc {

class VitMlp {
 public:
  VitMlp(const ModelContext& ctx, const std::string& name, std::int64_t width,
         std::int64_t hidden);

  Tensor forward(const Tensor& x, ForwardMode mode);
  Tensor backward(const Tensor& dy);
  void release();
  void collect(std::vector<Parameter*>& parameters);
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;

 private:
  ModelContext ctx_;
  TokenLinear fc1_, fc2_;
  Tensor saved_hidden_;  // the ReLU6 output, which fc2 keeps as its input too
};

}  // namespace pfc
