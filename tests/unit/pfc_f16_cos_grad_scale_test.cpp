// The scale that carries d loss / d cos into f16: a power of two that puts the largest
// possible magnitude, scale_s / global_batch, in (2^13, 2^14].
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "pfc/partial_fc.h"

namespace pfc {
namespace {

TEST(F16CosGradScale, PutsTheBoundJustUnder2To14) {
  using Case = std::pair<double, std::int64_t>;
  for (const auto& [s, batch] :
       {Case{64.0, 1024}, Case{64.0, 2}, Case{30.0, 1}, Case{64.0, std::int64_t{8} << 20}}) {
    const double scale = f16_cos_grad_scale(s, batch);
    int exponent = 0;
    EXPECT_EQ(std::frexp(scale, &exponent), 0.5) << "a power of two";
    const double largest = s / static_cast<double>(batch) * scale;
    EXPECT_LE(largest, 16384.0) << s << " " << batch;
    EXPECT_GT(largest, 8192.0) << s << " " << batch;
  }
  // The seed's setup: s = 64 over a global batch of 1024.
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024), 262144.0);
}

// The exact margin multiplies the target's entry by up to the largest factor: the scale leaves
// it room; a factor below 1 or one that is not finite changes nothing.
TEST(F16CosGradScale, LeavesRoomForTheExactMarginsFactor) {
  const double base = f16_cos_grad_scale(64.0, 1024);
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024, 3.0), base / 4);
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024, 4.0), base / 4);
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024, 1000.0), base / 1024);
  EXPECT_LE(64.0 / 1024 * 1000.0 * f16_cos_grad_scale(64.0, 1024, 1000.0), 16384.0);
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024, 0.5), base);
  EXPECT_EQ(f16_cos_grad_scale(64.0, 1024, HUGE_VAL), base);
}

TEST(F16CosGradScale, RejectsAnEmptyBatch) {
  EXPECT_THROW(f16_cos_grad_scale(64.0, 0), Error);
}

}  // namespace
}  // namespace pfc
