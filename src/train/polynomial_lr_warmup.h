// arcface_torch's lr_scheduler.py PolynomialLRWarmup, the schedule today's train_v2.py trains
// with, computed the way torch computes it so that every rate is bit for bit torch's:
//  - count 0 (torch's last_epoch 0, before the first scheduler step): the optimiser's own rate,
//    the base rate, so the first iteration trains at the full rate before the warm-up starts;
//  - 1 <= count <= warmup: base x count / warmup;
//  - warmup < count <= total: the previous rate times ((1 - (count - warmup) / (total - warmup))
//    / (1 - (count - 1 - warmup) / (total - warmup)))^power — torch's chained form, which
//    rounds differently from the closed form base x (1 - ...)^power (0.085714285714285743
//    against 0.085714285714285729 at step 5 of arcface_torch_v2_schedule_f64.h5);
//  - after total: the last rate (0) unchanged.
// The chain is walked from count 0; the last count asked is kept, so a run asking count after
// count pays one factor per step, and a resume walks it once from the start.
#pragma once

#include <cstdint>

namespace pfc {

class PolynomialLrWarmup {
 public:
  // warmup_iters is fractional when train_v2.py's warmup_epoch is (iterations per epoch x
  // warmup_epoch); power is PolynomialLRWarmup's (1.0 in train_v2.py).
  PolynomialLrWarmup(double base_lr, double warmup_iters, std::int64_t total_iters, double power);

  // The rate after `count` scheduler steps (torch's last_epoch): the rate iteration count + 1
  // trains at.
  double lr(std::int64_t count) const;

 private:
  // The rate at `count` given the rate at count - 1.
  double next(double previous, std::int64_t count) const;

  double base_lr_;
  double warmup_;
  std::int64_t total_;
  double power_;
  mutable std::int64_t walked_count_ = 0;  // the chain's furthest point asked for
  mutable double walked_lr_;
};

}  // namespace pfc
