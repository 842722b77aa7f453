// The counter-based RNG reproduces the golden files' fill rule bit for bit.
#include <gtest/gtest.h>

#include "core/counter_rng.h"

namespace pfc {
namespace {

TEST(CounterRng, GoldenFillRuleMatchesTheReadme) {
  const std::uint64_t h = fnv1a64("layer1.0.conv1.weight");
  const float expected[] = {0.0682886392f, 0.0989774466f, -0.0379249342f, -0.0472406521f,
                            -0.0894444361f};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(golden_fill_value(h, i, 0.0, 0.1), expected[i]);
}

TEST(CounterRng, StreamsForDifferentPurposesDiffer) {
  EXPECT_NE(stream_key(1, "sampler", 0, 0), stream_key(1, "data", 0, 0));
  EXPECT_NE(stream_key(1, "sampler", 0, 0), stream_key(1, "sampler", 1, 0));
  EXPECT_NE(stream_key(1, "sampler", 0, 0), stream_key(1, "sampler", 0, 1));
  EXPECT_NE(stream_key(1, "sampler", 0, 0), stream_key(2, "sampler", 0, 0));
  EXPECT_EQ(stream_key(7, "x", 3, 2), stream_key(7, "x", 3, 2));
}

TEST(CounterRng, UniformIsInRangeAndRoughlyFlat) {
  int buckets[10] = {};
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const double u = uniform53(42, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ++buckets[static_cast<int>(u * 10)];
  }
  for (int b : buckets) EXPECT_NEAR(b, 10000, 500);
}

}  // namespace
}  // namespace pfc
