// The PartialFC sampler: positives always kept, exactly num_sample sorted unique classes,
// labels re-indexed, the positives-only case, injected sets, negatives drawn uniformly (a
// chi-square test over many steps with a fixed seed), and the size a plan takes without a draw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/error.h"
#include "pfc/class_sampler.h"

namespace pfc {
namespace {

void expect_consistent(const ClassSample& s, const std::vector<std::int64_t>& labels,
                       const ShardLayout& layout) {
  EXPECT_TRUE(std::is_sorted(s.index.begin(), s.index.end()));
  EXPECT_EQ(std::set<std::int64_t>(s.index.begin(), s.index.end()).size(), s.index.size());
  for (std::int64_t c : s.index) {
    EXPECT_GE(c, 0);
    EXPECT_LT(c, layout.num_local);
  }
  ASSERT_EQ(s.local_label.size(), labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (layout.owns(labels[i])) {
      ASSERT_GE(s.local_label[i], 0) << "sample " << i;
      EXPECT_EQ(s.index[s.local_label[i]], labels[i] - layout.class_start) << "sample " << i;
    } else {
      EXPECT_EQ(s.local_label[i], -1) << "sample " << i;
    }
  }
}

TEST(ClassSampler, KeepsPositivesAndDrawsExactlyNumSample) {
  const std::vector<std::int64_t> labels = {3, 517, 3, 999, 0, 998};
  for (int world : {1, 2, 3, 4}) {
    for (int rank = 0; rank < world; ++rank) {
      const ShardLayout layout = ShardLayout::make(1000, world, rank, 0.1);
      for (std::int64_t step = 0; step < 5; ++step) {
        const ClassSample s = sample_classes(labels, layout, sampler_key(7, step, rank));
        EXPECT_EQ(static_cast<std::int64_t>(s.index.size()), layout.num_sample);
        expect_consistent(s, labels, layout);
      }
    }
  }
}

TEST(ClassSampler, PositivesOnlyWhenTheyExceedNumSample) {
  const ShardLayout layout = ShardLayout::make(20, 1, 0, 0.1);  // num_sample 2
  const std::vector<std::int64_t> labels = {7, 1, 5, 7};
  const ClassSample s = sample_classes(labels, layout, sampler_key(1, 0, 0));
  EXPECT_EQ(s.index, (std::vector<std::int64_t>{1, 5, 7}));
  EXPECT_EQ(s.local_label, (std::vector<std::int64_t>{2, 0, 1, 2}));

  const std::vector<std::int64_t> exactly = {9, 4};
  EXPECT_EQ(sample_classes(exactly, layout, sampler_key(1, 0, 0)).index,
            (std::vector<std::int64_t>{4, 9}));
}

// PartialFC_V2 at sample rate 0: each shard's positives, and nothing on a shard without any.
TEST(ClassSampler, SampleRateZeroTakesThePositivesAlone) {
  const std::vector<std::int64_t> labels = {3, 517, 3, 999};
  const std::vector<std::vector<std::int64_t>> want = {{3}, {}, {17}, {249}};
  for (int rank = 0; rank < 4; ++rank) {
    const ShardLayout layout = ShardLayout::make(1000, 4, rank, 0.0);
    const ClassSample s = sample_classes(labels, layout, sampler_key(5, 0, rank));
    EXPECT_EQ(s.index, want[static_cast<std::size_t>(rank)]) << "rank " << rank;
    expect_consistent(s, labels, layout);
  }
}

TEST(ClassSampler, SampleRateOneTakesEveryClass) {
  const ShardLayout layout = ShardLayout::make(10, 3, 1, 1.0);  // classes 4..6
  const std::vector<std::int64_t> labels = {5, 0, 9};
  const ClassSample s = sample_classes(labels, layout, sampler_key(3, 2, 1));
  EXPECT_EQ(s.index, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(s.local_label, (std::vector<std::int64_t>{1, -1, -1}));
  EXPECT_EQ(shard_local_labels(labels, layout), (std::vector<std::int64_t>{1, -1, -1}));
}

// What a plan uses instead of a draw: the draw's size, for every split, rate and label set.
TEST(ClassSampler, SampleSizeIsTheDrawsSize) {
  const std::vector<std::vector<std::int64_t>> label_sets = {
      {3, 517, 3, 999}, {7, 1, 5, 7, 2, 3, 4, 6}, {}, {0, 0, 0}};
  for (double rate : {0.0, 0.01, 0.1, 0.5, 1.0})
    for (int world : {1, 3})
      for (int rank = 0; rank < world; ++rank)
        for (const auto& labels : label_sets) {
          const ShardLayout layout = ShardLayout::make(1000, world, rank, rate);
          EXPECT_EQ(sample_size(labels, layout),
                    static_cast<std::int64_t>(
                        sample_classes(labels, layout, sampler_key(9, 0, rank)).index.size()))
              << "rate " << rate << ", rank " << rank << " of " << world;
        }
}

TEST(ClassSampler, DeterministicPerKeyAndDifferentAcrossSteps) {
  const ShardLayout layout = ShardLayout::make(1000, 1, 0, 0.1);
  const std::vector<std::int64_t> labels = {1, 2};
  const ClassSample a = sample_classes(labels, layout, sampler_key(5, 10, 0));
  EXPECT_EQ(a.index, sample_classes(labels, layout, sampler_key(5, 10, 0)).index);
  EXPECT_NE(a.index, sample_classes(labels, layout, sampler_key(5, 11, 0)).index);
  EXPECT_NE(a.index, sample_classes(labels, layout, sampler_key(6, 10, 0)).index);
}

TEST(ClassSampler, NegativesAreUniform) {
  // 1000 classes, 100 sampled per step, 3 of them positives: each of the 997 negatives should
  // be drawn with probability p = 97/997 at every step, independently of its position.
  const ShardLayout layout = ShardLayout::make(1000, 1, 0, 0.1);
  const std::vector<std::int64_t> labels = {3, 517, 3, 999};
  const int steps = 4000;
  std::vector<double> count(1000, 0.0);
  for (int step = 0; step < steps; ++step)
    for (std::int64_t c : sample_classes(labels, layout, sampler_key(2024, step, 0)).index)
      count[c] += 1.0;
  for (std::int64_t positive : {3, 517, 999}) EXPECT_EQ(count[positive], steps);

  const double n = 997.0, p = 97.0 / 997.0;
  const double expected = steps * p, variance = steps * p * (1.0 - p);
  double chi2 = 0.0;
  double first_half = 0.0;
  for (std::int64_t c = 0; c < 1000; ++c) {
    if (c == 3 || c == 517 || c == 999) continue;
    chi2 += (count[c] - expected) * (count[c] - expected) / variance;
    if (c < 500) first_half += count[c];
  }
  // E[chi2] = n, sd about sqrt(2n) = 45: six standard deviations either way.
  EXPECT_NEAR(chi2, n, 6.0 * std::sqrt(2.0 * n)) << "chi-square " << chi2;
  // No drift along the pass: the 499 negatives below 500 get their share (sd < 0.5 %).
  EXPECT_NEAR(first_half / (steps * 97.0), 499.0 / 997.0, 0.01);
}

TEST(ClassSampler, InjectedSetIsSplitByOwner) {
  const std::vector<std::int64_t> global = {2, 5, 8, 11, 14};
  const std::vector<std::int64_t> labels = {5, 11};
  const ShardLayout r0 = ShardLayout::make(16, 2, 0, 0.1), r1 = ShardLayout::make(16, 2, 1, 0.1);
  const ClassSample s0 = injected_classes(labels, r0, global);
  const ClassSample s1 = injected_classes(labels, r1, global);
  EXPECT_EQ(s0.index, (std::vector<std::int64_t>{2, 5}));
  EXPECT_EQ(s0.local_label, (std::vector<std::int64_t>{1, -1}));
  EXPECT_EQ(s1.index, (std::vector<std::int64_t>{0, 3, 6}));
  EXPECT_EQ(s1.local_label, (std::vector<std::int64_t>{-1, 1}));
}

TEST(ClassSampler, InjectedSetMustHoldThePositivesAndBeSorted) {
  const ShardLayout layout = ShardLayout::make(16, 1, 0, 0.5);
  const std::vector<std::int64_t> labels = {4};
  const std::vector<std::int64_t> lacks = {2, 5};
  const std::vector<std::int64_t> unsorted = {4, 2};
  const std::vector<std::int64_t> outside = {4, 16};
  EXPECT_THROW(injected_classes(labels, layout, lacks), Error);
  EXPECT_THROW(injected_classes(labels, layout, unsorted), Error);
  EXPECT_THROW(injected_classes(labels, layout, outside), Error);
}

}  // namespace
}  // namespace pfc
