// DivergenceMonitor: a run stops after `patience` consecutive non-finite losses; finite ones
// reset the count; fp16 steps the loss scaler skipped count only once the scale is at its
// floor; a run never ends on a non-finite loss.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "train/divergence_monitor.h"

namespace pfc {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(DivergenceMonitor, StopsAfterPatienceNonFiniteSteps) {
  DivergenceMonitor monitor(3);
  monitor.observe(1, 5.0, true, true);
  monitor.observe(2, kNaN, true, true);
  EXPECT_FALSE(monitor.healthy());
  monitor.observe(3, 4.0, true, true);  // a finite loss resets the count
  EXPECT_TRUE(monitor.healthy());
  monitor.observe(4, kNaN, true, true);
  monitor.observe(5, kInf, true, true);
  try {
    monitor.observe(6, kNaN, true, true);
    FAIL() << "three non-finite steps in a row did not stop the run";
  } catch (const TrainingDiverged& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("for 3 consecutive steps (steps 4..6"), std::string::npos) << text;
    EXPECT_NE(text.find("last good checkpoint stays"), std::string::npos) << text;
    EXPECT_EQ(e.exit_code(), kExitFailure);
  }
}

TEST(DivergenceMonitor, SkippedFp16StepsCountOnlyAtTheScaleFloor) {
  DivergenceMonitor monitor(2);
  for (std::int64_t step = 1; step <= 20; ++step)
    monitor.observe(step, kNaN, /*applied=*/false, /*scale_at_floor=*/false);
  EXPECT_FALSE(monitor.healthy());
  monitor.observe(21, kNaN, false, true);
  EXPECT_THROW(monitor.observe(22, kNaN, false, true), TrainingDiverged);
}

TEST(DivergenceMonitor, ARunDoesNotEndOnANonFiniteLoss) {
  DivergenceMonitor monitor(5);
  monitor.observe(1, 3.0, true, true);
  EXPECT_NO_THROW(monitor.check_end(1));
  monitor.observe(2, kNaN, true, true);
  EXPECT_THROW(monitor.check_end(2), TrainingDiverged);
  EXPECT_THROW(DivergenceMonitor(0), Error);
}

}  // namespace
}  // namespace pfc
