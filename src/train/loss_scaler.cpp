#include "train/loss_scaler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace pfc {

LossScaler::LossScaler(bool enabled, std::int64_t batch_size)
    : enabled_(enabled),
      max_scale_(enabled ? kMaxScalePerSample * static_cast<double>(batch_size) : 1.0) {
  PFC_CHECK(batch_size >= 1, "loss scaler: batch size {} must be at least 1", batch_size);
  state_.scale = enabled ? static_cast<double>(batch_size) : 1.0;
}

bool LossScaler::update(bool gradients_finite) {
  if (!enabled_) return true;
  if (!gradients_finite) {
    state_.scale = std::max(state_.scale * 0.5, 1.0);
    state_.clean_steps = 0;
    return false;
  }
  if (++state_.clean_steps == kGrowthInterval) {
    state_.scale = std::min(state_.scale * 2.0, max_scale_);
    state_.clean_steps = 0;
  }
  return true;
}

void LossScaler::restore(const LossScalerState& saved) {
  PFC_CHECK(std::isfinite(saved.scale) && saved.scale > 0 && saved.clean_steps >= 0,
            "loss scaler: invalid saved state (scale {}, clean steps {})", saved.scale,
            saved.clean_steps);
  if (!enabled_) return;
  state_.scale = std::clamp(saved.scale, 1.0, max_scale_);
  state_.clean_steps = std::min(saved.clean_steps, kGrowthInterval - 1);
}

}  // namespace pfc
