// The learning rate of every optimiser step. The base rate is lr x global batch / 512 (the
// seed's linear scaling rule, lr_scaling = "batch/512") or lr as given (arcface_torch's
// train_v2.py, lr_scaling = "none"); the global batch is one micro-batch of every rank, since
// gradient accumulation already sums gradient_acc of them. Two schedules on it:
//  - "step" (the seed's partial_fc train.py): linear warm-up from 0 over warmup_epoch epochs,
//    then x0.1 at each of decay_epoch;
//  - "polynomial" (arcface_torch's PolyScheduler): linear warm-up from 0, then
//    base x (1 - (step - warmup) / (total - warmup))^2, reaching 0 at the last step.
// Epochs become optimiser steps through num_image / (global batch x gradient_acc) (integer)
// steps per epoch, so that an epoch still reads num_image images.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace pfc {

class LrSchedule {
 public:
  // world_size: the ranks whose batches make one global batch (the emulated world when
  // emulating). Throws UsageError when one epoch does not hold a global batch.
  LrSchedule(const Config& cfg, std::int64_t world_size);

  // The rate for the optimizer step taken after `completed_steps` steps (0 for the first).
  double lr(std::int64_t completed_steps) const;

  double base_lr() const { return base_lr_; }
  // How the base rate came about, for the start-up log: "lr 0.1 x global batch 1024 / 512 =
  // 0.2 (lr_scaling = batch/512)".
  const std::string& base_lr_origin() const { return base_lr_origin_; }
  std::int64_t steps_per_epoch() const { return steps_per_epoch_; }
  std::int64_t total_steps() const { return total_steps_; }

 private:
  bool polynomial_ = false;
  double base_lr_ = 0;
  std::string base_lr_origin_;
  std::int64_t steps_per_epoch_ = 0;
  std::int64_t total_steps_ = 0;
  double warmup_steps_ = 0;           // fractional when warmup_epoch is, as in the seed
  std::vector<double> decay_steps_;   // step schedule only
};

}  // namespace pfc
