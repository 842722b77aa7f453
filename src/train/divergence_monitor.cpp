#include "train/divergence_monitor.h"

#include <fmt/format.h>

#include <cmath>

namespace pfc {

DivergenceMonitor::DivergenceMonitor(std::int64_t patience) : patience_(patience) {
  PFC_CHECK(patience >= 1, "divergence patience {} must be at least 1", patience);
}

void DivergenceMonitor::observe(std::int64_t step, double loss, bool applied,
                                bool scale_at_floor) {
  last_finite_ = std::isfinite(loss);
  if (last_finite_) {
    bad_steps_ = 0;
    return;
  }
  if (!applied && !scale_at_floor) return;  // a skipped fp16 step; the scaler deals with it
  if (bad_steps_++ == 0) first_bad_step_ = step;
  if (bad_steps_ < patience_) return;
  throw TrainingDiverged(fmt::format(
      "training diverged: the loss has been {} for {} consecutive steps (steps {}..{}; "
      "divergence_steps = {}); the run stops without checkpointing this state, the last good "
      "checkpoint stays. Lower lr, check the data, or resume from an earlier checkpoint",
      std::isnan(loss) ? "NaN" : "infinite", bad_steps_, first_bad_step_, step, patience_));
}

void DivergenceMonitor::check_end(std::int64_t step) const {
  if (last_finite_) return;
  throw TrainingDiverged(fmt::format(
      "training diverged: the loss of the last step ({}) is not finite; the run ends without "
      "checkpointing this state, the last good checkpoint stays",
      step));
}

}  // namespace pfc
