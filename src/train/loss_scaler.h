// The dynamic loss scale of fp16 training, as the seed's MaxClipGradScaler: it starts at the
// per-rank batch size, doubles after 100 consecutive steps with finite gradients (up to
// 128 x batch size), and on an inf/NaN gradient halves (never below 1) and the step is
// skipped. In fp32 mode the scaler is idle: scale 1, every step applied.
#pragma once

#include <cstdint>

namespace pfc {

struct LossScalerState {
  double scale = 1.0;
  std::int64_t clean_steps = 0;  // consecutive finite steps since the last change
};

class LossScaler {
 public:
  static constexpr std::int64_t kGrowthInterval = 100;
  static constexpr double kMaxScalePerSample = 128.0;

  LossScaler(bool enabled, std::int64_t batch_size);

  bool enabled() const { return enabled_; }
  double scale() const { return state_.scale; }
  double max_scale() const { return max_scale_; }

  // Called once per step with whether the gradients of every rank were finite (the trainer
  // agrees on that across ranks first). Returns whether to apply the step.
  bool update(bool gradients_finite);

  LossScalerState state() const { return state_; }
  // A saved state; its scale is brought into [1, max_scale] (the batch size may differ).
  void restore(const LossScalerState& saved);

 private:
  bool enabled_;
  double max_scale_;
  LossScalerState state_;
};

}  // namespace pfc
