// ShardLayout: arcface_torch's split of classes over ranks, including class counts that the
// world size does not divide and worlds larger than the class count.
#include <gtest/gtest.h>

#include "core/error.h"
#include "pfc/shard_layout.h"

namespace pfc {
namespace {

TEST(ShardLayout, TenClassesOverFourRanks) {
  const std::int64_t expected_local[] = {3, 3, 2, 2};
  const std::int64_t expected_start[] = {0, 3, 6, 8};
  for (int r = 0; r < 4; ++r) {
    const ShardLayout l = ShardLayout::make(10, 4, r, 1.0);
    EXPECT_EQ(l.num_local, expected_local[r]) << "rank " << r;
    EXPECT_EQ(l.class_start, expected_start[r]) << "rank " << r;
    EXPECT_EQ(l.num_sample, l.num_local);
    EXPECT_EQ(l.max_local(), 3);
  }
}

TEST(ShardLayout, ShardsTileTheClassesAndOwnerOfAgrees) {
  for (std::int64_t classes = 1; classes <= 40; ++classes) {
    for (int world = 1; world <= 7; ++world) {
      std::int64_t next = 0, largest = 0;
      for (int r = 0; r < world; ++r) {
        const ShardLayout l = ShardLayout::make(classes, world, r, 1.0);
        ASSERT_EQ(l.class_start, next) << classes << " classes, world " << world << " rank " << r;
        largest = std::max(largest, l.num_local);
        for (std::int64_t c = l.class_start; c < l.class_end(); ++c) {
          ASSERT_TRUE(l.owns(c));
          ASSERT_EQ(l.owner_of(c), r) << "class " << c << " of " << classes << ", world " << world;
        }
        next = l.class_end();
      }
      EXPECT_EQ(next, classes);
      EXPECT_EQ(ShardLayout::make(classes, world, 0, 1.0).max_local(), largest);
    }
  }
}

TEST(ShardLayout, NumSampleTruncatesLikePythonInt) {
  // 1000 classes over 3 ranks: 334, 333, 333 rows; int(0.1 * 334) = 33.
  EXPECT_EQ(ShardLayout::make(1000, 3, 0, 0.1).num_sample, 33);
  EXPECT_EQ(ShardLayout::make(1000, 3, 1, 0.1).num_sample, 33);
  EXPECT_EQ(ShardLayout::make(1000, 1, 0, 0.1).num_sample, 100);
  EXPECT_EQ(ShardLayout::make(7, 1, 0, 0.1).num_sample, 0);
  EXPECT_EQ(ShardLayout::make(1000, 8, 7, 0.3).num_sample, 37);  // int(0.3 * 125) = 37
  // Sample rate 0 (PartialFC_V2): no negatives, the positives alone.
  EXPECT_EQ(ShardLayout::make(1000, 4, 2, 0.0).num_sample, 0);
}

TEST(ShardLayout, MoreRanksThanClassesLeavesEmptyShards) {
  const ShardLayout last = ShardLayout::make(3, 5, 4, 1.0);
  EXPECT_EQ(last.num_local, 0);
  EXPECT_EQ(last.class_start, 3);
  EXPECT_EQ(last.owner_of(2), 2);
}

TEST(ShardLayout, RejectsBadInput) {
  EXPECT_THROW(ShardLayout::make(0, 1, 0, 1.0), UsageError);
  EXPECT_THROW(ShardLayout::make(10, 1, 0, -0.1), UsageError);
  EXPECT_THROW(ShardLayout::make(10, 1, 0, 1.5), UsageError);
  EXPECT_THROW(ShardLayout::make(10, 2, 2, 1.0), Error);
  EXPECT_THROW(ShardLayout::make(10, 2, 0, 1.0).owner_of(10), Error);
}

}  // namespace
}  // namespace pfc
