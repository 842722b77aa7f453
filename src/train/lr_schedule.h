// The learning rate of every step. Two schedules, both on a base rate of lr x global batch / 512
// (the seed's linear scaling rule):
//  - "step" (the seed's partial_fc train.py): linear warm-up from 0 over warmup_epoch epochs,
//    then x0.1 at each of decay_epoch;
//  - "polynomial" (arcface_torch's PolyScheduler): linear warm-up from 0, then
//    base x (1 - (step - warmup) / (total - warmup))^2, reaching 0 at the last step.
// Epochs become steps through num_image / global batch (integer) steps per epoch.
#pragma once

#include <cstdint>
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
  std::int64_t steps_per_epoch() const { return steps_per_epoch_; }
  std::int64_t total_steps() const { return total_steps_; }

 private:
  bool polynomial_ = false;
  double base_lr_ = 0;
  std::int64_t steps_per_epoch_ = 0;
  std::int64_t total_steps_ = 0;
  double warmup_steps_ = 0;           // fractional when warmup_epoch is, as in the seed
  std::vector<double> decay_steps_;   // step schedule only
};

}  // namespace pfc
