// One optimiser step of the training loop, shared by `pfc train` and the golden check of
// arcface_torch's training loop: gradient_acc micro-batches, each through the backbone and
// PartialFC with their gradients summed (train_v2.py sums them, it does not average); then the
// backbone's gradient summed over the ranks and unscaled, the overflow check every rank agrees
// on (an inf or NaN in any micro-batch skips the backbone's update), clipping, and one
// optimiser update of the backbone and of the class centres used in any of the micro-batches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "comm/comm.h"
#include "model/backbone.h"
#include "model/flat_parameters.h"
#include "optim/optimizer.h"
#include "pfc/partial_fc.h"
#include "train/loss_scaler.h"

namespace pfc {

struct TrainingStepOptions {
  std::int64_t gradient_acc = 1;  // micro-batches per optimiser step
  double clip_grad_norm = 5.0;    // of the backbone's gradient, after unscaling
  OptimizerSettings optimizer;    // the backbone's (the head has its own, in its options)
  // Keys the backbone's random draws (a Vision Transformer's masking and DropPath) with the
  // step and each sample's place in the global batch.
  std::uint64_t draw_seed = 0;
};

// One micro-batch: images [b, s, s, 3] on the backend's device, labels [b] i64 on the host.
struct MicroBatch {
  const Tensor* images = nullptr;
  const Tensor* labels = nullptr;
};

// Gives micro-batch i (0 .. gradient_acc - 1) of the step; its tensors must stay valid until
// the next call.
using MicroBatchSource = std::function<MicroBatch(std::int64_t micro_batch)>;

struct StepResult {
  std::vector<double> losses;    // of each micro-batch, in order
  bool backbone_updated = true;  // false: an inf or NaN gradient (fp16) skipped the update

  double mean_loss() const;
};

class TrainingStep {
 public:
  // Flattens the model's trainable parameters (flat_parameters.h). Their values may still be
  // set afterwards (initialisation, import, a checkpoint): the parameters are views.
  TrainingStep(Backend& backend, Comm& comm, Backbone& model, PartialFc& head, LossScaler& scaler,
               const TrainingStepOptions& options);

  // Collective. `step`: optimiser steps completed before this one (micro-batch i draws the
  // class sample keyed step * gradient_acc + i). lr: the rate as applied.
  StepResult run(const MicroBatchSource& next, std::int64_t step, double lr);

  const TrainingStepOptions& options() const { return options_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  const FlatParameters& parameters() const { return flat_; }
  // The backbone's optimiser state over the flat buffer (checkpoints read and write it).
  OptimizerState& backbone_state() { return state_; }
  // p's part of the backbone's moment `moment`, in our layout.
  Tensor backbone_moment(const Parameter& p, std::size_t moment) const;

 private:
  // Folds the gradient of micro-batch i into the step's sum; after the last one flat_.grad
  // holds the sum.
  void accumulate_backbone_gradient(std::int64_t micro_batch);

  Backend& backend_;
  Comm& comm_;
  Backbone& model_;
  PartialFc& head_;
  LossScaler& scaler_;
  TrainingStepOptions options_;
  std::unique_ptr<Optimizer> optimizer_;
  FlatParameters flat_;
  OptimizerState state_;
  Tensor embeddings_grad_;
  Tensor grad_sum_;  // the earlier micro-batches' backbone gradient (gradient_acc > 1 only)
};

}  // namespace pfc
