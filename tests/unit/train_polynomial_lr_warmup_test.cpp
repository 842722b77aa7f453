// PolynomialLrWarmup: arcface_torch's PolynomialLRWarmup, torch's own rounding included; the
// first count at the base rate; the chain walked again for an earlier count.
#include <gtest/gtest.h>

#include <cmath>

#include "train/polynomial_lr_warmup.h"

namespace pfc {
namespace {

// The `lrs` of arcface_torch_v2_schedule_f64.h5 (sgd case: lr 0.1, warm-up 3, total 10), as
// torch's scheduler produced them, printed with 17 digits: the chained decay rounds off the
// closed form (0.085714285714285729 at count 4).
TEST(PolynomialLrWarmup, EqualsTorchBitForBit) {
  const double torch_lrs[] = {0.10000000000000001,  0.033333333333333333, 0.066666666666666666,
                              0.10000000000000002,  0.085714285714285743, 0.071428571428571452,
                              0.057142857142857155, 0.042857142857142871, 0.028571428571428581,
                              0.014285714285714297};
  const PolynomialLrWarmup schedule(0.1, 3, 10, 1.0);
  for (int count = 0; count < 10; ++count)
    EXPECT_EQ(schedule.lr(count), torch_lrs[count]) << "count " << count;
  EXPECT_EQ(schedule.lr(10), 0.0);  // the decay reaches 0 at total ...
  EXPECT_EQ(schedule.lr(25), 0.0);  // ... and torch keeps the rate after it
}

TEST(PolynomialLrWarmup, AnEarlierCountWalksTheChainAgain) {
  const PolynomialLrWarmup walked(0.1, 3, 10, 1.0);
  const double late = walked.lr(8);
  const double early = walked.lr(5);
  EXPECT_EQ(walked.lr(8), late);
  const PolynomialLrWarmup fresh(0.1, 3, 10, 1.0);
  EXPECT_EQ(fresh.lr(5), early);
}

// Without warm-up the decay starts at count 1; a power of 2 is the square of the linear decay.
TEST(PolynomialLrWarmup, PowerAndNoWarmup) {
  const PolynomialLrWarmup linear(1.0, 0, 100, 1.0), square(1.0, 0, 100, 2.0);
  EXPECT_EQ(linear.lr(0), 1.0);
  for (int count : {1, 30, 50, 99}) {
    const double closed = 1.0 - count / 100.0;
    EXPECT_NEAR(linear.lr(count), closed, 1e-14) << count;
    EXPECT_NEAR(square.lr(count), closed * closed, 1e-14) << count;
  }
}

// A fractional warm-up (warmup_epoch 0.5) as torch has it: the decay chain starts from the
// last warm-up rate, base x floor(w) / w, not from the base rate.
TEST(PolynomialLrWarmup, FractionalWarmup) {
  const PolynomialLrWarmup schedule(1.0, 2.5, 10, 1.0);
  EXPECT_EQ(schedule.lr(2), 1.0 * 2 / 2.5);
  const double factor = (1.0 - (3 - 2.5) / 7.5) / (1.0 - (2 - 2.5) / 7.5);
  EXPECT_EQ(schedule.lr(3), 0.8 * factor);
}

}  // namespace
}  // namespace pfc
