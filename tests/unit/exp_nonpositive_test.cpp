// The softmax's exponential (backend/cpu/exp_nonpositive.h) rounds to the correctly rounded f32
// on a sample of a million f32 values spread over [-150, 0] (each 1124th bit pattern: every
// binade, down to the subnormal results), against exp in long double; and keeps its edges.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cpu/exp_nonpositive.h"

namespace pfc {
namespace {

TEST(ExpNonpositive, RoundsToTheCorrectlyRoundedF32) {
  const std::uint32_t first = std::bit_cast<std::uint32_t>(-0.0f);
  const std::uint32_t last = std::bit_cast<std::uint32_t>(-150.0f);
  std::int64_t checked = 0, wrong = 0;
  for (std::uint32_t bits = first; bits <= last; bits += 1124) {
    const float x = std::bit_cast<float>(bits);
    const auto exact = static_cast<float>(std::exp(static_cast<long double>(x)));
    wrong += static_cast<float>(cpu::exp_nonpositive(x)) != exact;
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
  EXPECT_EQ(wrong, 0);
}

TEST(ExpNonpositive, EdgesAndSpecialValues) {
  EXPECT_EQ(cpu::exp_nonpositive(0.0f), 1.0);
  EXPECT_EQ(cpu::exp_nonpositive(-0.0f), 1.0);
  EXPECT_EQ(static_cast<float>(cpu::exp_nonpositive(-150.0f)), 0.0f);
  EXPECT_EQ(static_cast<float>(cpu::exp_nonpositive(-1e30f)), 0.0f);
  EXPECT_EQ(static_cast<float>(cpu::exp_nonpositive(-std::numeric_limits<float>::infinity())),
            0.0f);
  EXPECT_TRUE(std::isnan(cpu::exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(cpu::exp_nonpositive(-std::numeric_limits<float>::quiet_NaN())));
  // The smallest subnormal f32, 2^-149, is exp(-103.28...).
  EXPECT_GT(static_cast<float>(cpu::exp_nonpositive(-103.2f)), 0.0f);
}

}  // namespace
}  // namespace pfc
