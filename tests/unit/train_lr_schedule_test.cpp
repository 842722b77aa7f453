// LrSchedule: the seed's step schedule, arcface_torch's older PolyScheduler and today's
// PolynomialLRWarmup, step by step; the base rate scaled by the global batch or as given;
// epochs counted in optimiser steps of gradient_acc micro-batches, the polynomial schedules in
// micro-batches as train_v2.py counts them.
#include <gtest/gtest.h>

#include "config/config.h"
#include "core/error.h"
#include "train/lr_schedule.h"

namespace pfc {
namespace {

// The seed's benchmark: batch 128 on 8 ranks, lr 0.1 for 512, 1 000 000 images per epoch.
Config seed_config() {
  Config cfg;
  cfg.lr = 0.1;
  cfg.batch_size = 128;
  cfg.num_image = 1000000;
  cfg.num_epoch = 30;
  cfg.warmup_epoch = 0;
  cfg.decay_epoch = {10, 16, 22};
  cfg.lr_schedule = "step";
  return cfg;
}

TEST(LrSchedule, StepScalesByGlobalBatchAndDecaysAtEachEpoch) {
  const LrSchedule schedule(seed_config(), 8);
  EXPECT_DOUBLE_EQ(schedule.base_lr(), 0.2);  // the seed's "LearningRate 0.2000"
  EXPECT_EQ(schedule.steps_per_epoch(), 976);  // 1 000 000 // 1024
  EXPECT_EQ(schedule.total_steps(), 976 * 30);
  // decay steps: 10 * 1e6 // 1024 = 9765, 15625, 21484
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.2);
  EXPECT_DOUBLE_EQ(schedule.lr(9764), 0.2);
  EXPECT_DOUBLE_EQ(schedule.lr(9765), 0.2 * 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(15624), 0.2 * 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(15625), 0.2 * 0.01);
  EXPECT_DOUBLE_EQ(schedule.lr(21484), 0.2 * 0.001);
  EXPECT_DOUBLE_EQ(schedule.lr(1000000), 0.2 * 0.001);
}

TEST(LrSchedule, StepWarmsUpLinearlyFromZero) {
  Config cfg = seed_config();
  cfg.warmup_epoch = 2;  // 1952 steps
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.0);
  EXPECT_DOUBLE_EQ(schedule.lr(488), 0.2 * 488 / 1952);
  EXPECT_DOUBLE_EQ(schedule.lr(976), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(1951), 0.2 * 1951 / 1952);
  EXPECT_DOUBLE_EQ(schedule.lr(1952), 0.2);
}

TEST(LrSchedule, FractionalWarmupEpochs) {
  Config cfg = seed_config();
  cfg.warmup_epoch = 0.5;  // 488 steps
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.lr(244), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(488), 0.2);
}

TEST(LrSchedule, PolynomialDecaysQuadraticallyToZero) {
  Config cfg = seed_config();
  cfg.lr_schedule = "polynomial";
  cfg.num_epoch = 2;  // 1952 steps
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.2);
  EXPECT_DOUBLE_EQ(schedule.lr(976), 0.2 * 0.25);
  EXPECT_DOUBLE_EQ(schedule.lr(1464), 0.2 * 0.0625);
  EXPECT_DOUBLE_EQ(schedule.lr(1952), 0.0);
  EXPECT_DOUBLE_EQ(schedule.lr(5000), 0.0);
}

TEST(LrSchedule, PolynomialWithWarmup) {
  Config cfg = seed_config();
  cfg.lr_schedule = "polynomial";
  cfg.num_epoch = 2;
  cfg.warmup_epoch = 1;  // 976 warm-up steps, then 976 of decay
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.0);
  EXPECT_DOUBLE_EQ(schedule.lr(488), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(976), 0.2);
  EXPECT_DOUBLE_EQ(schedule.lr(1464), 0.2 * 0.25);
  EXPECT_DOUBLE_EQ(schedule.lr(1952), 0.0);
}

TEST(LrSchedule, SingleRankUsesItsOwnBatch) {
  const LrSchedule schedule(seed_config(), 1);
  EXPECT_DOUBLE_EQ(schedule.base_lr(), 0.025);
  EXPECT_EQ(schedule.steps_per_epoch(), 7812);
}

TEST(LrSchedule, RejectsAnEpochSmallerThanOneGlobalBatch) {
  Config cfg = seed_config();
  cfg.num_image = 1000;
  EXPECT_THROW(LrSchedule(cfg, 8), UsageError);
  EXPECT_NO_THROW(LrSchedule(cfg, 4));  // 512 per global batch: one step per epoch
}

// arcface_torch's wf42m_pfc02_16gpus_r100.py: lr 0.3 at 16 x 256 is the rate applied; with the
// seed's rule it would be 0.3 x 4096 / 512 = 2.4.
TEST(LrSchedule, NoScalingAppliesLrAsGiven) {
  Config cfg = seed_config();
  cfg.lr = 0.3;
  cfg.batch_size = 256;
  cfg.lr_scaling = "none";
  const LrSchedule plain(cfg, 16);
  EXPECT_DOUBLE_EQ(plain.base_lr(), 0.3);
  EXPECT_DOUBLE_EQ(plain.lr(0), 0.3);
  EXPECT_EQ(plain.base_lr_origin(), "lr 0.3 as given (lr_scaling = none)");
  cfg.lr_scaling = "batch/512";
  const LrSchedule scaled(cfg, 16);
  EXPECT_DOUBLE_EQ(scaled.base_lr(), 2.4);
  EXPECT_EQ(scaled.base_lr_origin(),
            "lr 0.3 x global batch 4096 / 512 = 2.4 (lr_scaling = batch/512)");
}

// Two micro-batches per step: an epoch holds half as many optimiser steps, the decays come at
// the same epochs, and the rate is that of one micro-batch's global batch.
TEST(LrSchedule, GradientAccumulationCountsOptimiserSteps) {
  Config cfg = seed_config();
  cfg.gradient_acc = 2;
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.base_lr(), 0.2);
  EXPECT_EQ(schedule.steps_per_epoch(), 488);  // 1 000 000 // 2048
  EXPECT_EQ(schedule.total_steps(), 488 * 30);
  EXPECT_DOUBLE_EQ(schedule.lr(4881), 0.2);  // 10 * 1e6 // 2048 = 4882
  EXPECT_DOUBLE_EQ(schedule.lr(4882), 0.2 * 0.1);
  cfg.num_image = 1024;  // one global batch: no whole step of two
  EXPECT_THROW(LrSchedule(cfg, 8), UsageError);
}

TEST(LrSchedule, RejectsPolynomialWarmupAsLongAsTheRun) {
  Config cfg = seed_config();
  cfg.lr_schedule = "polynomial";
  cfg.num_epoch = 2;
  cfg.warmup_epoch = 2;
  try {
    LrSchedule schedule(cfg, 8);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("warmup_epoch"), std::string::npos) << e.what();
  }
}

TEST(LrSchedule, PolynomialTakesLrPower) {
  Config cfg = seed_config();
  cfg.lr_schedule = "polynomial";
  cfg.num_epoch = 2;
  cfg.lr_power = 1;
  const LrSchedule schedule(cfg, 8);
  EXPECT_DOUBLE_EQ(schedule.lr(976), 0.2 * 0.5);
}

// The run of the issue that found the difference: MobileFaceNet, 200 identities, 8 epochs of
// 75 global batches, warm-up 1 epoch, lr 0.1 as given. arcface_torch's train_v2.py logged
// LearningRate 0.100000 at global step 1, 0.001333 at 2, 0.066857 at 250, 0.038286 at 400.
Config train_v2_config() {
  Config cfg;
  cfg.lr = 0.1;
  cfg.lr_scaling = "none";
  cfg.lr_schedule = "polynomial_warmup";
  cfg.lr_power = 1;
  cfg.batch_size = 4;
  cfg.num_image = 300;  // 75 global batches of 4
  cfg.num_epoch = 8;
  cfg.warmup_epoch = 1;
  return cfg;
}

TEST(LrSchedule, PolynomialWarmupIsTrainV2s) {
  const LrSchedule schedule(train_v2_config(), 1);
  EXPECT_EQ(schedule.total_steps(), 600);
  EXPECT_EQ(schedule.lr(0), 0.1);  // step 1: the optimiser's own rate, before the warm-up
  EXPECT_NEAR(schedule.lr(1), 0.1 / 75, 1e-17);
  EXPECT_NEAR(schedule.lr(75), 0.1, 1e-16);
  EXPECT_NEAR(schedule.lr(249), 0.1 * (1 - (249.0 - 75) / 525), 1e-15);  // 0.066857
  EXPECT_NEAR(schedule.lr(399), 0.1 * (1 - (399.0 - 75) / 525), 1e-15);  // 0.038286
  EXPECT_NEAR(schedule.lr(599), 0.1 / 525, 1e-15);  // the last step, just above 0
}

TEST(LrSchedule, DescribesItself) {
  EXPECT_EQ(LrSchedule(train_v2_config(), 1).describe(),
            "lr_schedule polynomial_warmup (train_v2.py's PolynomialLRWarmup, power 1): step 1 "
            "at the base rate, warm-up 75 and 600 iterations in all");
  EXPECT_EQ(LrSchedule(seed_config(), 8).describe(),
            "lr_schedule step: warm-up from 0 over 0 steps, x0.1 at steps 9765, 15625, 21484");
}

// lr_power 0 takes the schedule's own power: PolynomialLRWarmup's 1, PolyScheduler's 2.
TEST(LrSchedule, PowerZeroTakesTheSchedulesOwn) {
  Config cfg = train_v2_config();
  cfg.lr_power = 0;
  EXPECT_EQ(LrSchedule(cfg, 1).lr(399), LrSchedule(train_v2_config(), 1).lr(399));
  cfg.lr_schedule = "polynomial";
  Config square = cfg;
  square.lr_power = 2;
  EXPECT_EQ(LrSchedule(cfg, 1).lr(399), LrSchedule(square, 1).lr(399));
}

// train_v2.py steps its scheduler after every micro-batch and counts warmup_step and
// total_step in them: with two micro-batches per optimiser step, step n trains at the count of
// its last micro-batch, 2n - 1.
TEST(LrSchedule, PolynomialWarmupCountsMicroBatches) {
  Config cfg = train_v2_config();
  const LrSchedule per_batch(cfg, 1);
  cfg.gradient_acc = 2;
  const LrSchedule accumulated(cfg, 1);
  EXPECT_EQ(accumulated.steps_per_epoch(), 37);  // 300 // 8
  EXPECT_EQ(accumulated.lr(0), per_batch.lr(1));
  EXPECT_EQ(accumulated.lr(40), per_batch.lr(81));
  EXPECT_EQ(accumulated.lr(299), per_batch.lr(599));
}

// A resumed run builds its schedule afresh and asks for its next step first: the rate is the
// one the uninterrupted run applied, on any rank count (3 ranks: 25 steps per epoch).
TEST(LrSchedule, ResumeContinuesExactly) {
  for (std::int64_t ranks : {1, 3}) {
    const LrSchedule uninterrupted(train_v2_config(), ranks);
    std::vector<double> rates;
    for (std::int64_t s = 0; s < uninterrupted.total_steps(); ++s)
      rates.push_back(uninterrupted.lr(s));
    for (std::int64_t resume_at : {1, 24, 25, 26, 137}) {
      const LrSchedule resumed(train_v2_config(), ranks);
      for (std::int64_t s = resume_at; s < resume_at + 5; ++s)
        EXPECT_EQ(resumed.lr(s), rates[static_cast<std::size_t>(s)])
            << ranks << " ranks, resumed at " << resume_at << ", step " << s;
    }
  }
}

}  // namespace
}  // namespace pfc
