// LossScaler: growth after 100 clean steps up to 128 x batch, halving and skipping on
// overflow (never below 1), the idle fp32 mode, and saving / restoring its state.
#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"
#include "train/loss_scaler.h"

namespace pfc {
namespace {

void clean_steps(LossScaler& scaler, int n) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(scaler.update(true));
}

TEST(LossScaler, StartsAtTheBatchSizeAndDoublesAfter100CleanSteps) {
  LossScaler scaler(true, 128);
  EXPECT_EQ(scaler.scale(), 128.0);
  EXPECT_EQ(scaler.max_scale(), 128.0 * 128.0);
  clean_steps(scaler, 99);
  EXPECT_EQ(scaler.scale(), 128.0);
  EXPECT_EQ(scaler.state().clean_steps, 99);
  clean_steps(scaler, 1);
  EXPECT_EQ(scaler.scale(), 256.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);
  clean_steps(scaler, 100);
  EXPECT_EQ(scaler.scale(), 512.0);
}

TEST(LossScaler, OverflowHalvesSkipsAndRestartsTheCount) {
  LossScaler scaler(true, 128);
  clean_steps(scaler, 60);
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 64.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);
  clean_steps(scaler, 99);
  EXPECT_EQ(scaler.scale(), 64.0);  // the 60 clean steps before the overflow do not count
  clean_steps(scaler, 1);
  EXPECT_EQ(scaler.scale(), 128.0);
}

TEST(LossScaler, GrowthStopsAtTheMaximum) {
  LossScaler scaler(true, 4);
  for (int i = 0; i < 20; ++i) clean_steps(scaler, 100);
  EXPECT_EQ(scaler.scale(), 512.0);  // 128 x 4
}

TEST(LossScaler, NeverBelowOne) {
  LossScaler scaler(true, 2);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1.0);
}

TEST(LossScaler, StateRoundTrips) {
  LossScaler scaler(true, 128);
  clean_steps(scaler, 250);
  const LossScalerState saved = scaler.state();
  EXPECT_EQ(saved.scale, 512.0);
  EXPECT_EQ(saved.clean_steps, 50);

  LossScaler resumed(true, 128);
  resumed.restore(saved);
  EXPECT_EQ(resumed.scale(), 512.0);
  clean_steps(resumed, 49);
  EXPECT_EQ(resumed.scale(), 512.0);
  clean_steps(resumed, 1);
  EXPECT_EQ(resumed.scale(), 1024.0);
}

TEST(LossScaler, RestoreBringsTheScaleIntoRange) {
  LossScaler scaler(true, 8);
  scaler.restore({1e9, 5});
  EXPECT_EQ(scaler.scale(), 1024.0);
  scaler.restore({0.25, 5});
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_THROW(scaler.restore({std::numeric_limits<double>::quiet_NaN(), 0}), Error);
  EXPECT_THROW(scaler.restore({16.0, -1}), Error);
}

TEST(LossScaler, Fp32IsIdle) {
  LossScaler scaler(false, 128);
  EXPECT_FALSE(scaler.enabled());
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_TRUE(scaler.update(false));
  clean_steps(scaler, 300);
  EXPECT_EQ(scaler.scale(), 1.0);
  scaler.restore({512.0, 7});
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);
}

}  // namespace
}  // namespace pfc
