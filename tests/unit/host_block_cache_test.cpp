// The host block cache hands a freed large block out again for the same size, leaves small
// ones to malloc, and never holds more than the most that was live at once.
#include <gtest/gtest.h>

#include "core/host_block_cache.h"

namespace pfc {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(HostBlockCache, ReusesAFreedBlockOfTheSameSize) {
  HostBlockCache cache;
  void* a = cache.take(4 * kMiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  cache.give(a, 4 * kMiB);
  EXPECT_EQ(cache.cached_bytes(), 4 * kMiB);
  EXPECT_EQ(cache.take(4 * kMiB), a);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  cache.give(a, 4 * kMiB);
}

TEST(HostBlockCache, LeavesSmallBlocksToMalloc) {
  HostBlockCache cache;
  void* a = cache.take(kSmallestCachedBlock / 2);
  ASSERT_NE(a, nullptr);
  cache.give(a, kSmallestCachedBlock / 2);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(HostBlockCache, HoldsNoMoreThanThePeakOfLiveBlocks) {
  HostBlockCache cache;
  void* a = cache.take(8 * kMiB);
  void* b = cache.take(2 * kMiB);
  cache.give(a, 8 * kMiB);
  cache.give(b, 2 * kMiB);
  EXPECT_EQ(cache.cached_bytes(), 10 * kMiB);  // the peak: 10 MiB live at once
  // 6 MiB of a size not held: with 10 cached and 6 live the process would hold 16 MiB, above
  // the 10 MiB peak, so the largest cached block goes.
  void* c = cache.take(6 * kMiB);
  EXPECT_EQ(cache.cached_bytes(), 2 * kMiB);
  cache.give(c, 6 * kMiB);
  EXPECT_EQ(cache.cached_bytes(), 8 * kMiB);
}

}  // namespace
}  // namespace pfc
