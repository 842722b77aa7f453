#include "train/lr_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace pfc {

LrSchedule::LrSchedule(const Config& cfg, std::int64_t world_size) {
  PFC_CHECK(world_size >= 1, "world size {} must be at least 1", world_size);
  const std::int64_t global_batch = cfg.batch_size * world_size;
  const std::int64_t step_images = global_batch * cfg.gradient_acc;
  steps_per_epoch_ = cfg.num_image / step_images;
  if (steps_per_epoch_ < 1)
    throw UsageError(fmt::format(
        "num_image ({}) is smaller than the images of one step (batch_size {} x {} ranks x "
        "gradient_acc {} = {}): an epoch would have no step",
        cfg.num_image, cfg.batch_size, world_size, cfg.gradient_acc, step_images));
  polynomial_ = cfg.lr_schedule == "polynomial";
  PFC_CHECK(polynomial_ || cfg.lr_schedule == "step", "unknown lr_schedule '{}'",
            cfg.lr_schedule);
  PFC_CHECK(cfg.lr_scaling == "batch/512" || cfg.lr_scaling == "none", "unknown lr_scaling '{}'",
            cfg.lr_scaling);
  if (cfg.lr_scaling == "none") {
    base_lr_ = cfg.lr;
    base_lr_origin_ = fmt::format("lr {} as given (lr_scaling = none)", cfg.lr);
  } else {
    base_lr_ = cfg.lr * static_cast<double>(global_batch) / 512.0;
    base_lr_origin_ = fmt::format("lr {} x global batch {} / 512 = {} (lr_scaling = batch/512)",
                                  cfg.lr, global_batch, base_lr_);
  }
  total_steps_ = steps_per_epoch_ * cfg.num_epoch;
  warmup_steps_ = static_cast<double>(steps_per_epoch_) * cfg.warmup_epoch;
  if (polynomial_ && warmup_steps_ >= static_cast<double>(total_steps_))
    throw UsageError(fmt::format(
        "warmup_epoch ({}) must be smaller than num_epoch ({}) for lr_schedule = \"polynomial\"",
        cfg.warmup_epoch, cfg.num_epoch));
  // The seed computes decay_epoch x num_image // global_batch: a floor of the exact product.
  for (double epoch : cfg.decay_epoch)
    decay_steps_.push_back(
        std::floor(epoch * static_cast<double>(cfg.num_image) / static_cast<double>(step_images)));
}

double LrSchedule::lr(std::int64_t completed_steps) const {
  const double step = static_cast<double>(std::max<std::int64_t>(completed_steps, 0));
  if (step < warmup_steps_) return base_lr_ * step / warmup_steps_;
  if (polynomial_) {
    const double t = static_cast<double>(total_steps_);
    const double progress = (std::min(step, t) - warmup_steps_) / (t - warmup_steps_);
    return base_lr_ * (1.0 - progress) * (1.0 - progress);
  }
  const auto decays = std::count_if(decay_steps_.begin(), decay_steps_.end(),
                                    [step](double d) { return d <= step; });
  return base_lr_ * std::pow(0.1, static_cast<double>(decays));
}

}  // namespace pfc
