#include "train/progress_line.h"

#include <fmt/format.h>

namespace pfc {

std::string progress_line(const Progress& p) {
  std::string line = fmt::format(
      "Training: Speed {:.2f} samples/sec   Loss {:.4f}   LearningRate {:.6f}   Epoch: {}   "
      "Global Step: {}",
      p.samples_per_s, p.loss, p.lr, p.epoch, p.step);
  if (p.loss_scale) line += fmt::format("   Fp16 Grad Scale: {:2.0f}", *p.loss_scale);
  return line + fmt::format("   Required: {:.0f} hours", p.hours_left);
}

double hours_left(double seconds_training, std::int64_t steps_trained, std::int64_t steps_left) {
  if (steps_trained <= 0 || steps_left <= 0) return 0.0;
  constexpr double kSecondsPerHour = 3600;
  return seconds_training / static_cast<double>(steps_trained) *
         static_cast<double>(steps_left) / kSecondsPerHour;
}

}  // namespace pfc
