// The learning rate of every optimiser step. The base rate is lr x global batch / 512 (the
// seed's linear scaling rule, lr_scaling = "batch/512") or lr as given (arcface_torch's
// train_v2.py, lr_scaling = "none"); the global batch is one micro-batch of every rank, since
// gradient accumulation already sums gradient_acc of them. Three schedules on it:
//  - "step" (the seed's partial_fc train.py): linear warm-up from 0 over warmup_epoch epochs,
//    then x0.1 at each of decay_epoch; epochs in optimiser steps;
//  - "polynomial" (arcface_torch's older PolyScheduler): linear warm-up from 0, then
//    base x (1 - (it - warmup) / (total - warmup))^lr_power (2), reaching 0 at the end;
//  - "polynomial_warmup" (today's train_v2.py: PolynomialLRWarmup, power lr_power, 1): the
//    first iteration at the base rate, then base x k / warmup, then the decay to 0 (see
//    polynomial_lr_warmup.h).
// Epochs become optimiser steps through num_image / (global batch x gradient_acc) (integer)
// steps per epoch, so that an epoch still reads num_image images. The two polynomial schedules
// count iterations (micro-batches) as train_v2.py does: it steps its scheduler after every
// micro-batch, with num_image // global batch of them per epoch, so optimiser step n (from 1)
// of gradient_acc micro-batches trains at the scheduler's count n x gradient_acc - 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "train/polynomial_lr_warmup.h"

namespace pfc {

class LrSchedule {
 public:
  // world_size: the ranks whose batches make one global batch (the emulated world when
  // emulating). Throws UsageError when one epoch does not hold a global batch.
  LrSchedule(const Config& cfg, std::int64_t world_size);

  // The rate for the optimizer step taken after `completed_steps` steps (0 for the first). A
  // function of the step alone, so a resumed run continues the sequence exactly.
  double lr(std::int64_t completed_steps) const;

  double base_lr() const { return base_lr_; }
  // How the base rate came about, for the start-up log: "lr 0.1 x global batch 1024 / 512 =
  // 0.2 (lr_scaling = batch/512)".
  const std::string& base_lr_origin() const { return base_lr_origin_; }
  // The schedule in the start-up log's words: "lr_schedule polynomial_warmup (train_v2.py's
  // PolynomialLRWarmup, power 1): step 1 at the base rate, warm-up 75 and 600 iterations in
  // all".
  std::string describe() const;
  std::int64_t steps_per_epoch() const { return steps_per_epoch_; }
  std::int64_t total_steps() const { return total_steps_; }

 private:
  enum class Kind { step, polynomial, polynomial_warmup };
  double polynomial(std::int64_t iteration) const;

  Kind kind_ = Kind::step;
  double base_lr_ = 0;
  std::string base_lr_origin_;
  std::int64_t steps_per_epoch_ = 0;
  std::int64_t total_steps_ = 0;
  std::int64_t gradient_acc_ = 1;
  double warmup_steps_ = 0;           // fractional when warmup_epoch is, as in the seed
  std::vector<double> decay_steps_;   // step schedule only
  // The polynomial schedules, in iterations: train_v2.py's warmup_step and total_step.
  double warmup_iters_ = 0;
  std::int64_t total_iters_ = 0;
  double power_ = 0;
  std::optional<PolynomialLrWarmup> warmup_chain_;  // polynomial_warmup only
};

}  // namespace pfc
