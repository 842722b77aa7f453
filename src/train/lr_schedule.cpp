#include "train/lr_schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  if (cfg.lr_schedule == "polynomial")
    kind_ = Kind::polynomial;
  else if (cfg.lr_schedule == "polynomial_warmup")
    kind_ = Kind::polynomial_warmup;
  else
    PFC_CHECK(cfg.lr_schedule == "step", "unknown lr_schedule '{}'", cfg.lr_schedule);
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
  gradient_acc_ = cfg.gradient_acc;
  total_steps_ = steps_per_epoch_ * cfg.num_epoch;
  warmup_steps_ = static_cast<double>(steps_per_epoch_) * cfg.warmup_epoch;
  if (kind_ != Kind::step && cfg.warmup_epoch >= static_cast<double>(cfg.num_epoch))
    throw UsageError(fmt::format(
        "warmup_epoch ({}) must be smaller than num_epoch ({}) for lr_schedule = \"{}\"",
        cfg.warmup_epoch, cfg.num_epoch, cfg.lr_schedule));
  // train_v2.py: warmup_step = num_image // total_batch_size * warmup_epoch, total_step the
  // same with num_epoch, total_batch_size being batch_size x world_size (no gradient_acc).
  const std::int64_t iters_per_epoch = cfg.num_image / global_batch;
  warmup_iters_ = static_cast<double>(iters_per_epoch) * cfg.warmup_epoch;
  total_iters_ = iters_per_epoch * cfg.num_epoch;
  power_ = cfg.lr_power > 0 ? cfg.lr_power : (kind_ == Kind::polynomial ? 2.0 : 1.0);
  if (kind_ == Kind::polynomial_warmup)
    warmup_chain_.emplace(base_lr_, warmup_iters_, total_iters_, power_);
  // The seed computes decay_epoch x num_image // global_batch: a floor of the exact product.
  for (double epoch : cfg.decay_epoch)
    decay_steps_.push_back(
        std::floor(epoch * static_cast<double>(cfg.num_image) / static_cast<double>(step_images)));
}

std::string LrSchedule::describe() const {
  switch (kind_) {
    case Kind::polynomial_warmup:
      return fmt::format("lr_schedule polynomial_warmup (train_v2.py's PolynomialLRWarmup, "
                         "power {}): step 1 at the base rate, warm-up {} and {} iterations in all",
                         power_, warmup_iters_, total_iters_);
    case Kind::polynomial:
      return fmt::format("lr_schedule polynomial (PolyScheduler, power {}): warm-up from 0 over "
                         "{} and {} iterations in all",
                         power_, warmup_iters_, total_iters_);
    case Kind::step:
      break;
  }
  return fmt::format("lr_schedule step: warm-up from 0 over {} steps, x0.1 at steps {}",
                     warmup_steps_, fmt::join(decay_steps_, ", "));
}

double LrSchedule::polynomial(std::int64_t iteration) const {
  const double it = static_cast<double>(iteration);
  if (it < warmup_iters_) return base_lr_ * it / warmup_iters_;
  const double t = static_cast<double>(total_iters_);
  const double progress = (std::min(it, t) - warmup_iters_) / (t - warmup_iters_);
  return base_lr_ * std::pow(1.0 - progress, power_);
}

double LrSchedule::lr(std::int64_t completed_steps) const {
  const std::int64_t done = std::max<std::int64_t>(completed_steps, 0);
  // The scheduler count the step's last micro-batch trains at (see the header).
  const std::int64_t iteration = (done + 1) * gradient_acc_ - 1;
  switch (kind_) {
    case Kind::polynomial_warmup:
      return warmup_chain_->lr(iteration);
    case Kind::polynomial:
      return polynomial(iteration);
    case Kind::step:
      break;
  }
  const double step = static_cast<double>(done);
  if (step < warmup_steps_) return base_lr_ * step / warmup_steps_;
  const auto decays = std::count_if(decay_steps_.begin(), decay_steps_.end(),
                                    [step](double d) { return d <= step; });
  return base_lr_ * std::pow(0.1, static_cast<double>(decays));
}

}  // namespace pfc
