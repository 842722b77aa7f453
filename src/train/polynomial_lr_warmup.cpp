#include "train/polynomial_lr_warmup.h"

#include <cmath>

#include "core/error.h"

namespace pfc {

PolynomialLrWarmup::PolynomialLrWarmup(double base_lr, double warmup_iters,
                                       std::int64_t total_iters, double power)
    : base_lr_(base_lr),
      warmup_(warmup_iters),
      total_(total_iters),
      power_(power),
      walked_lr_(base_lr) {
  PFC_CHECK(warmup_iters >= 0 && total_iters >= 0 && power > 0,
            "PolynomialLRWarmup needs warmup {} and total {} iterations >= 0 and power {} > 0",
            warmup_iters, total_iters, power);
}

double PolynomialLrWarmup::next(double previous, std::int64_t count) const {
  const double l = static_cast<double>(count);
  if (count > total_) return previous;
  if (l <= warmup_) return base_lr_ * l / warmup_;
  // torch: l - w and l - 1 - w in Python arithmetic, each divided by t - w.
  const double span = static_cast<double>(total_) - warmup_;
  const double factor =
      (1.0 - (l - warmup_) / span) / (1.0 - (static_cast<double>(count - 1) - warmup_) / span);
  return previous * std::pow(factor, power_);
}

double PolynomialLrWarmup::lr(std::int64_t count) const {
  PFC_CHECK(count >= 0, "scheduler step {} is negative", count);
  if (count < walked_count_) {
    walked_count_ = 0;
    walked_lr_ = base_lr_;
  }
  while (walked_count_ < count) {
    ++walked_count_;
    walked_lr_ = next(walked_lr_, walked_count_);
  }
  return walked_lr_;
}

}  // namespace pfc
