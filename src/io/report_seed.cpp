#include "io/report_seed.h"

#include <array>

namespace pfc {

namespace {

struct SeedRow {
  std::int64_t identities;
  bool benchmark_row;  // false: the headline pair, reported only where we ran it
  // DP, MP, PFC 0.1; 0 where the seed has "-".
  std::array<double, 3> samples_per_s;
  std::array<double, 3> memory_mb;
};

// The benchmark tables of seeds/000 ("Speed Benchmark"), and the headline pair at 3 000 000
// identities from its training logs (speed ~2270 / ~5300) and gpustat (the busiest GPU).
constexpr SeedRow kSeedRows[] = {
    {125'000, true, {4681, 4824, 5004}, {7358, 5306, 4868}},
    {250'000, true, {4047, 4521, 4976}, {9940, 5826, 5004}},
    {500'000, true, {3087, 4013, 4900}, {14220, 7114, 5202}},
    {1'000'000, true, {2090, 3449, 4803}, {23708, 9966, 5620}},
    {1'400'000, true, {1672, 3043, 4738}, {32252, 11178, 6056}},
    {2'000'000, true, {0, 2593, 4626}, {0, 13978, 6472}},
    {3'000'000, false, {0, 2270, 5300}, {0, 30338, 10488}},
    {4'000'000, true, {0, 1748, 4208}, {0, 23238, 8284}},
    {5'500'000, true, {0, 1389, 3975}, {0, 32188, 9854}},
    {8'000'000, true, {0, 0, 3565}, {0, 0, 12310}},
    {16'000'000, true, {0, 0, 2679}, {0, 0, 19950}},
    {29'000'000, true, {0, 0, 1855}, {0, 0, 32324}},
};

}  // namespace

std::optional<SeedFigure> seed_figure(std::int64_t identities, const std::string& column) {
  for (const SeedRow& row : kSeedRows) {
    if (row.identities != identities) continue;
    for (std::size_t c = 0; c < std::size(kSeedColumns); ++c)
      if (column == kSeedColumns[c] && row.samples_per_s[c] > 0)
        return SeedFigure{row.samples_per_s[c], row.memory_mb[c]};
  }
  return std::nullopt;
}

std::vector<std::int64_t> seed_benchmark_identities() {
  std::vector<std::int64_t> identities;
  for (const SeedRow& row : kSeedRows)
    if (row.benchmark_row) identities.push_back(row.identities);
  return identities;
}

}  // namespace pfc
