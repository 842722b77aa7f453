// uniform_subset and its sequential reference: exactly k sorted, distinct members of [0, n),
// a pure function of the key, and every candidate equally likely (chi-square over many keys)
// both when extras are trimmed from a Bernoulli pass and when the pass keeps everything.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "core/counter_rng.h"
#include "core/error.h"
#include "pfc/uniform_subset.h"

namespace pfc {
namespace {

using Draw = std::function<std::vector<std::int64_t>(std::int64_t, std::int64_t, std::uint64_t)>;

void expect_subset(const std::vector<std::int64_t>& s, std::int64_t n, std::int64_t k) {
  ASSERT_EQ(static_cast<std::int64_t>(s.size()), k);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::set<std::int64_t>(s.begin(), s.end()).size(), s.size());
  if (!s.empty()) {
    EXPECT_GE(s.front(), 0);
    EXPECT_LT(s.back(), n);
  }
}

// Chi-square of how often each candidate is drawn, over `draws` keys, against k / n.
double chi_square(const Draw& draw, std::int64_t n, std::int64_t k, int draws) {
  std::vector<double> count(static_cast<std::size_t>(n), 0.0);
  for (int d = 0; d < draws; ++d)
    for (std::int64_t c : draw(n, k, splitmix64(static_cast<std::uint64_t>(d) + 99))) count[c] += 1;
  const double p = static_cast<double>(k) / static_cast<double>(n);
  const double expected = draws * p, variance = draws * p * (1.0 - p);
  double chi2 = 0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / variance;
  return chi2;
}

TEST(UniformSubset, ExactlyKSortedDistinctMembers) {
  for (const auto& [n, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 0}, {1, 0}, {1, 1}, {10, 3}, {10, 9}, {10, 10}, {1000, 100}, {3'000'000, 300'000}}) {
    expect_subset(uniform_subset(n, k, 5), n, k);
    if (n <= 1000) expect_subset(sequential_subset(n, k, 5), n, k);
  }
}

TEST(UniformSubset, APureFunctionOfTheKey) {
  // Large enough to split the pass across threads: the split must not show in the result.
  EXPECT_EQ(uniform_subset(2'500'000, 1000, 42), uniform_subset(2'500'000, 1000, 42));
  EXPECT_NE(uniform_subset(1000, 100, 42), uniform_subset(1000, 100, 43));
}

TEST(UniformSubset, BadSizesAreRefused) {
  EXPECT_THROW(uniform_subset(10, 11, 1), Error);
  EXPECT_THROW(uniform_subset(10, -1, 1), Error);
  EXPECT_THROW(sequential_subset(-1, 0, 1), Error);
}

TEST(UniformSubset, EveryCandidateEquallyLikely) {
  // Each count has variance draws * p * (1 - p), so E[chi2] = n; sd about sqrt(2n): six either
  // way.
  const auto check = [](const char* what, const Draw& draw, std::int64_t n, std::int64_t k) {
    const double chi2 = chi_square(draw, n, k, 4000);
    const double dof = static_cast<double>(n);
    EXPECT_NEAR(chi2, dof, 6.0 * std::sqrt(2.0 * dof)) << what << " n " << n << " k " << k;
  };
  check("trimmed", uniform_subset, 1000, 100);     // keeps about 170, trims about 70
  check("all kept", uniform_subset, 100, 95);      // keeps all 100, trims 5
  check("sequential", sequential_subset, 1000, 100);
}

}  // namespace
}  // namespace pfc
