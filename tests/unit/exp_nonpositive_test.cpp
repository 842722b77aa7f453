// The softmax's exponential (backend/cpu/exp_nonpositive.h) is within 1.02 units in the last
// place of exp in long double on a sample of a million f32 values spread over [-104, 0] (each
// 1070th bit pattern: every binade, down to the subnormal results), and rounds correctly on
// all but a few percent of them; and keeps its edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cpu/exp_nonpositive.h"

namespace pfc {
namespace {

TEST(ExpNonpositive, IsWithinAboutOneUnitInTheLastPlace) {
  const std::uint32_t first = std::bit_cast<std::uint32_t>(-0.0f);
  const std::uint32_t last = std::bit_cast<std::uint32_t>(-104.0f);
  std::int64_t checked = 0, not_correctly_rounded = 0;
  double worst = 0.0;
  for (std::uint32_t bits = first; bits <= last; bits += 1070) {
    const float x = std::bit_cast<float>(bits);
    const long double exact = std::exp(static_cast<long double>(x));
    const auto rounded = static_cast<float>(exact);
    const float got = cpu::exp_nonpositive(x);
    // The unit in the last place of the correctly rounded result (subnormal ones too).
    const long double unit =
        static_cast<long double>(std::nextafter(rounded, std::numeric_limits<float>::infinity())) -
        static_cast<long double>(rounded);
    worst = std::max(worst, static_cast<double>(std::fabs(got - exact) / unit));
    not_correctly_rounded += got != rounded;
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
  EXPECT_LE(worst, 1.02);
  EXPECT_LT(not_correctly_rounded, checked / 20);
}

TEST(ExpNonpositive, EdgesAndSpecialValues) {
  EXPECT_EQ(cpu::exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(cpu::exp_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(cpu::exp_nonpositive(-104.0f), 0.0f);
  EXPECT_EQ(cpu::exp_nonpositive(-1e30f), 0.0f);
  EXPECT_EQ(cpu::exp_nonpositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(cpu::exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(cpu::exp_nonpositive(-std::numeric_limits<float>::quiet_NaN())));
  // The smallest subnormal f32, 2^-149, is exp(-103.28...).
  EXPECT_GT(cpu::exp_nonpositive(-103.2f), 0.0f);
  // The smallest normal f32, 2^-126, is exp(-87.34...): results either side of it.
  EXPECT_GT(cpu::exp_nonpositive(-87.0f), std::numeric_limits<float>::min());
  EXPECT_LT(cpu::exp_nonpositive(-88.0f), std::numeric_limits<float>::min());
  EXPECT_GT(cpu::exp_nonpositive(-88.0f), 0.0f);
}

}  // namespace
}  // namespace pfc
