// The progress line: the seed's fields in the seed's order, then arcface_torch's loss scale
// (fp16) and hours left; the learning rate with six decimals; the estimate of hours left.
#include <gtest/gtest.h>

#include <regex>

#include "train/progress_line.h"

namespace pfc {
namespace {

TEST(ProgressLine, Fp32HasTheSeedsFieldsThenTheHoursLeft) {
  EXPECT_EQ(progress_line({5299.564, 1.09653, 0.2, 0, 100, std::nullopt, 19.4}),
            "Training: Speed 5299.56 samples/sec   Loss 1.0965   LearningRate 0.200000   "
            "Epoch: 0   Global Step: 100   Required: 19 hours");
}

TEST(ProgressLine, Fp16AddsTheLossScaleAsArcfaceTorchDoes) {
  EXPECT_EQ(progress_line({100, 30.5, 0.0000123, 3, 4200, 65536.0, 0.4}),
            "Training: Speed 100.00 samples/sec   Loss 30.5000   LearningRate 0.000012   "
            "Epoch: 3   Global Step: 4200   Fp16 Grad Scale: 65536   Required: 0 hours");
}

TEST(ProgressLine, TheSeedsParserStillMatches) {
  // The seed's own line, as its log parsers read it.
  const std::regex seed(R"(Training: Speed ([0-9.]+) samples/sec   Loss ([0-9.]+)   )"
                        R"(LearningRate ([0-9.]+)   Epoch: (\d+)   Global Step: (\d+))");
  std::smatch m;
  const std::string line = progress_line({5300, 1.0965, 0.2, 0, 100, 128.0, 2});
  ASSERT_TRUE(std::regex_search(line, m, seed)) << line;
  EXPECT_EQ(m[1], "5300.00");
  EXPECT_EQ(m[3], "0.200000");
  EXPECT_EQ(m[5], "100");
}

TEST(ProgressLine, HoursLeftFromTheMeanStepTime) {
  EXPECT_DOUBLE_EQ(hours_left(36.0, 10, 1000), 1.0);  // 3.6 s a step, 1000 steps left
  EXPECT_EQ(hours_left(0.0, 0, 1000), 0.0);           // no step yet: no estimate
  EXPECT_EQ(hours_left(10.0, 5, 0), 0.0);             // done
}

}  // namespace
}  // namespace pfc
