// Half: exact round-trips, round-to-nearest-even, overflow, subnormals and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"

namespace pfc {
namespace {

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const float f = Half::to_float(static_cast<std::uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Half::to_float(Half::from_float(f))));
      continue;
    }
    EXPECT_EQ(Half::from_float(f), bits) << "bits " << bits;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(Half::from_float(1.0f), 0x3C00);
  EXPECT_EQ(Half::from_float(-2.0f), 0xC000);
  EXPECT_EQ(Half::from_float(65504.0f), 0x7BFF);
  EXPECT_EQ(Half::from_float(65520.0f), 0x7C00);  // rounds up past the largest: infinity
  EXPECT_EQ(Half::from_float(65519.0f), 0x7BFF);
  EXPECT_EQ(Half::from_float(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(Half::from_float(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(Half::from_float(2.98e-8f), 0x0000);       // below half of it: zero
  EXPECT_EQ(Half::to_float(0x3555), 0.333251953125f);
}

TEST(Half, RoundsHalfwayToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(Half::from_float(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: ties go to 0x3C02.
  EXPECT_EQ(Half::from_float(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(Half, MatchesNearestForRandomFloats) {
  std::uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = std::ldexp(static_cast<float>(state >> 8) / 16777216.0f - 0.5f,
                               static_cast<int>(state % 40) - 25);
    const std::uint16_t h = Half::from_float(f);
    const float back = Half::to_float(h);
    // No other half is closer.
    for (int d : {-1, 1}) {
      const std::uint16_t other = static_cast<std::uint16_t>(h + d);
      if ((other & 0x7C00u) == 0x7C00u) continue;
      if (((other ^ h) & 0x8000u) != 0) continue;
      EXPECT_LE(std::fabs(back - f), std::fabs(Half::to_float(other) - f)) << f;
    }
  }
}

}  // namespace
}  // namespace pfc
