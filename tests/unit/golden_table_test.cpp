// The rule `pfc golden` judges by: each precision's per-tensor bound (fp64 1e-10; fp32
// max(1e-4, 4 x arcface_torch's larger fp32 error); fp16 1e-2), --tolerance replacing it, the
// fp32 median of our error over arcface_torch's on the same kind of device, a true zero
// measured against a sibling's size with arcface_torch's error restated alike, and a NaN that
// fails instead of passing.
#include <gtest/gtest.h>

#include <cmath>

#include "app/golden_table.h"

namespace pfc {
namespace {

const TorchFp32Error kTorch{2e-4, 5e-4};  // CPU, GPU

// A row of two values whose relative error is `error` (reference [1, 0]).
void add_row(GoldenTable& table, const std::string& name, double error,
             const TorchFp32Error& torch = kTorch) {
  const double reference[2] = {1.0, 0.0};
  const double ours[2] = {1.0 + error, 0.0};
  table.compare(name, ours, reference, 2, torch);
}

TEST(GoldenRule, BoundsPerPrecision) {
  EXPECT_EQ(golden_rule("fp64", false, 0).bound(kTorch), 1e-10);
  EXPECT_EQ(golden_rule("fp16", true, 0).bound(kTorch), 1e-2);
  const GoldenRule fp32 = golden_rule("fp32", false, 0);
  EXPECT_DOUBLE_EQ(fp32.bound(kTorch), 4 * 5e-4);  // the larger of the two
  EXPECT_DOUBLE_EQ(fp32.bound({1e-6, 2e-6}), 1e-4);  // the floor
  EXPECT_DOUBLE_EQ(fp32.bound({}), 1e-4);            // a file without arcface_torch's errors
  EXPECT_TRUE(fp32.median_rule);
  EXPECT_FALSE(golden_rule("fp64", false, 0).median_rule);
  const GoldenRule strict = golden_rule("fp32", false, 1e-9);
  EXPECT_EQ(strict.bound(kTorch), 1e-9);
  EXPECT_TRUE(strict.median_rule);
  EXPECT_THROW(golden_rule("fp8", false, 0), Error);
}

TEST(GoldenRule, RatioComparesWithTheSameKindOfDevice) {
  EXPECT_EQ(golden_rule("fp32", false, 0).same_device(kTorch), 2e-4);
  EXPECT_EQ(golden_rule("fp32", true, 0).same_device(kTorch), 5e-4);
  // eval_embeddings has a CPU figure only.
  EXPECT_EQ(golden_rule("fp32", true, 0).same_device({1e-5, std::nullopt}), 1e-5);
  EXPECT_FALSE(golden_rule("fp32", true, 0).same_device({}).has_value());
}

TEST(GoldenTable, Fp32PassesWithinFourTimesArcfaceTorchAndAMedianAtMostOne) {
  GoldenTable table("t", golden_rule("fp32", false, 0));
  add_row(table, "small", 1e-5);
  add_row(table, "same", 2e-4);
  add_row(table, "three times", 6e-4);  // ratio 3, within 4 x 5e-4
  EXPECT_EQ(table.failures(), 0);
  EXPECT_NEAR(*table.median_ratio(), 1.0, 1e-9);
  add_row(table, "five times the larger", 2.5e-3);
  EXPECT_EQ(table.failures(), 2);  // the row, and the median (now 2)
}

TEST(GoldenTable, MedianRuleFailsAlone) {
  GoldenTable table("t", golden_rule("fp32", false, 0));
  for (int i = 0; i < 3; ++i) add_row(table, "r" + std::to_string(i), 3e-4);  // ratio 1.5
  EXPECT_NEAR(*table.median_ratio(), 1.5, 1e-9);
  EXPECT_EQ(table.failures(), 1);
  // fp64 has no median rule: the same rows fail by their bound only.
  GoldenTable exact("t", golden_rule("fp64", false, 0));
  add_row(exact, "a", 5e-11);
  add_row(exact, "b", 2e-10);
  EXPECT_EQ(exact.failures(), 1);
}

TEST(GoldenTable, ExactZeroIsMeasuredAgainstItsSiblingAndSoIsArcfaceTorch) {
  GoldenTable table("t", golden_rule("fp32", false, 0));
  // A true zero stored as noise of L2 1e-15; arcface_torch's fp32 lies 1e8 of that from it.
  const double reference[2] = {6e-16, 8e-16};
  const double ours[2] = {3e-8, 4e-8};  // L2 5e-8
  table.compare("bias", ours, reference, 2, {1e8, 1e8}, "", 2.0);
  ASSERT_EQ(table.failures(), 0);
  // Ours: 5e-8 / 2; arcface_torch's: 1e8 x 1e-15 / 2.
  EXPECT_NEAR(*table.median_ratio(), 0.5, 1e-7);
}

TEST(GoldenTable, NanFailsAndScalarsUseTheLossError) {
  GoldenTable table("t", golden_rule("fp64", false, 0));
  const double reference[1] = {1.0};
  const double nan[1] = {std::nan("")};
  table.compare("nan", nan, reference, 1, {});
  EXPECT_EQ(table.failures(), 1);
  GoldenTable losses("t", golden_rule("fp32", false, 0));
  losses.compare_scalar("loss", 10.0 + 1e-5, 10.0, {1e-6, 2e-6});
  EXPECT_EQ(losses.failures(), 0);
  EXPECT_NEAR(*losses.median_ratio(), 1e-6 / 1e-6, 1e-6);
  losses.skip("eval_embeddings", "not built");
  EXPECT_EQ(losses.compared(), 1);
}

}  // namespace
}  // namespace pfc
