// Stops a run whose loss is no longer a number. After `patience` consecutive steps with a
// non-finite loss the run has diverged: it stops with status "diverged" (exit 1) and keeps its
// last good checkpoint, instead of training on NaN to the end and checkpointing it.
//
// fp16's skipped steps: an overflow in the f16 forward can make one step's loss inf or NaN;
// the loss scaler skips that step and halves its scale, and training goes on. Such a step
// counts only once the scale is at its floor, where halving cures nothing (weights that are
// themselves NaN overflow on every step, whatever the scale).
//
// The loss every rank sees is the same all-reduced number, so every rank decides alike.
#pragma once

#include <cstdint>

#include "core/error.h"

namespace pfc {

// Exit code 1, like any failed run; the trainer records status "diverged".
class TrainingDiverged : public Error {
 public:
  using Error::Error;
};

class DivergenceMonitor {
 public:
  // patience >= 1.
  explicit DivergenceMonitor(std::int64_t patience);

  // After each step: its number, its loss, whether the optimiser applied it (false: the loss
  // scaler skipped it) and whether the loss scale is at its floor. Throws TrainingDiverged
  // when this makes `patience` consecutive counted non-finite steps.
  void observe(std::int64_t step, double loss, bool applied, bool scale_at_floor);
  // Whether the last step's loss was finite: only then may the state be checkpointed.
  bool healthy() const { return last_finite_; }
  // At the end of a run: throws TrainingDiverged when its last loss was not finite (a run never
  // ends "ok" on NaN, even when it stopped before `patience` steps).
  void check_end(std::int64_t step) const;

 private:
  std::int64_t patience_;
  std::int64_t bad_steps_ = 0;
  std::int64_t first_bad_step_ = 0;
  bool last_finite_ = true;
};

}  // namespace pfc
