// BatchNorm2d / BatchNorm1d over the last (channel) dimension, with PyTorch's running
// statistics: updated by a training forward, used in place of the batch's by an inference
// one. `trainable_scale = false` is iresnet's `features` layer, whose scale is frozen at 1.0.
#pragma once

#include <string>
#include <vector>

#include "model/inference_graph.h"
#include "model/model_context.h"
#include "model/parameter.h"

namespace pfc {

class BatchNorm {
 public:
  static constexpr double kEps = 1e-5;
  static constexpr double kMomentum = 0.1;

  // eps: kEps, or the 2e-5 of arcface_torch's ViT feature head.
  BatchNorm(const ModelContext& ctx, const std::string& name, std::int64_t channels,
            bool trainable_scale = true, double eps = kEps);

  Tensor forward(const Tensor& x, ForwardMode mode);
  // The last training forward's output again, from the input and statistics it kept for the
  // backward (Backend::batchnorm_forward_saved): for a consumer that did not keep it.
  Tensor recompute_output() const;
  Tensor backward(const Tensor& dy);
  void release();
  // The batch-norm in inference mode: normalised by the running statistics.
  GraphValue trace(InferenceGraph& graph, GraphValue x) const;
  void collect(std::vector<Parameter*>& parameters, std::vector<Buffer*>& buffers);

  Parameter weight, bias;
  Buffer running_mean, running_var;

 private:
  ModelContext ctx_;
  std::int64_t channels_;
  double eps_;
  Tensor saved_input_, saved_mean_, saved_invstd_;
};

}  // namespace pfc
