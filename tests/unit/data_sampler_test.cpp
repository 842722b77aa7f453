// DistributedSampler: per-epoch orders, rank slices of each global batch, dropped tails,
// and positions that resume the same stream on any number of ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/distributed_sampler.h"

namespace pfc {
namespace {

std::vector<std::int64_t> global_samples(std::int64_t n, std::int64_t global_batch, int world,
                                         std::uint64_t seed, const DataPosition& from,
                                         std::int64_t k) {
  std::vector<std::int64_t> all;
  for (int r = 0; r < world; ++r) {
    const DistributedSampler s(n, global_batch / world, r, world, seed);
    const auto part = s.rank_samples(s.locate(from, k));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

TEST(DataSampler, EpochOrderIsAPermutationThatDependsOnSeedAndEpoch) {
  const auto a = epoch_order(1000, 5, 0);
  std::vector<std::uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(a, epoch_order(1000, 5, 0));
  EXPECT_NE(a, epoch_order(1000, 5, 1));
  EXPECT_NE(a, epoch_order(1000, 6, 0));
  int fixed_points = 0;
  for (std::uint32_t i = 0; i < 1000; ++i) fixed_points += a[i] == i;
  EXPECT_LT(fixed_points, 10);  // a shuffle, not the identity
}

TEST(DataSampler, RankSlicesAreDisjointAndCoverEachGlobalBatch) {
  const std::int64_t n = 50;
  const int world = 3;
  const std::int64_t b = 4;
  const DistributedSampler s0(n, b, 0, world, 9);
  EXPECT_EQ(s0.global_batch(), 12);
  EXPECT_EQ(s0.batches_per_epoch(), 4);  // 48 of 50: the tail of 2 is dropped
  for (std::int64_t k = 0; k < 8; ++k) {
    const GlobalBatch g = s0.locate({}, k);
    EXPECT_EQ(g.epoch, k / 4);
    EXPECT_EQ(g.offset, k % 4 * 12);
    const auto order = epoch_order(n, 9, g.epoch);
    std::vector<std::int64_t> want(order.begin() + g.offset, order.begin() + g.offset + 12);
    EXPECT_EQ(global_samples(n, 12, world, 9, {}, k), want);
  }
  std::set<std::int64_t> epoch0;
  for (std::int64_t k = 0; k < 4; ++k)
    for (std::int64_t i : global_samples(n, 12, world, 9, {}, k)) epoch0.insert(i);
  EXPECT_EQ(epoch0.size(), 48u);
  EXPECT_NE(global_samples(n, 12, world, 9, {}, 0), global_samples(n, 12, world, 9, {}, 4));
}

TEST(DataSampler, PositionsCountGlobalSamplesAndSkipShortTails) {
  const DistributedSampler s(50, 4, 1, 3, 9);
  EXPECT_EQ(s.after(s.locate({}, 0)), (DataPosition{0, 12}));
  EXPECT_EQ(s.after(s.locate({}, 3)), (DataPosition{0, 48}));
  // 48 + 12 > 50: the next batch is the first of epoch 1.
  EXPECT_EQ(s.locate({0, 48}, 0).epoch, 1);
  EXPECT_EQ(s.locate({0, 48}, 0).offset, 0);
  EXPECT_EQ(s.locate({0, 40}, 0).epoch, 1);
  EXPECT_EQ(s.locate({0, 38}, 0).offset, 38);  // 38 + 12 = 50 still fits
  EXPECT_EQ(s.locate({0, 38}, 1).epoch, 1);
  EXPECT_EQ(s.locate({2, 6}, 5).epoch, 3);
  EXPECT_EQ(s.locate({2, 6}, 5).offset, 24);  // 3 batches left in epoch 2, then 2 more
  EXPECT_EQ(s.rank_begin({2, 6}), 10);
  EXPECT_THROW(s.check({0, 51}), Error);
  EXPECT_THROW(s.check({-1, 0}), Error);
  EXPECT_NO_THROW(s.check({3, 50}));
  EXPECT_THROW(DistributedSampler(10, 4, 0, 3, 1), UsageError);
}

TEST(DataSampler, ResumingOnAnotherWorldSizeReadsTheSameGlobalBatches) {
  const std::int64_t n = 100;
  // Two ranks of 6 read 3 global batches of 12 and 1 more within epoch 2; save the position.
  const DistributedSampler two(n, 6, 0, 2, 4);
  DataPosition saved = two.after(two.locate({}, 8 * 2 + 3));
  EXPECT_EQ(saved, (DataPosition{2, 48}));
  const auto reference = [&](std::int64_t k) { return global_samples(n, 12, 2, 4, saved, k); };
  for (int world : {1, 3, 4, 6, 12}) {
    for (std::int64_t k = 0; k < 6; ++k) {
      const auto got = global_samples(n, 12, world, 4, saved, k);
      EXPECT_EQ(got, reference(k)) << "world " << world << " batch " << k;
    }
  }
}

}  // namespace
}  // namespace pfc
