// The seed's benchmark figures (8 x Tesla V100-SXM2-32GB, one node, r50, batch 128 per GPU,
// fp16, synthetic data): the only place they are written down in pfc. `pfc report` prints
// them beside ours.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pfc {

// The report's method columns, in the order the seed prints them.
inline constexpr const char* kSeedColumns[] = {"DP", "MP", "PFC 0.1"};

struct SeedFigure {
  double samples_per_s = 0;  // all eight GPUs together
  double memory_mb = 0;      // per GPU as nvidia-smi/gpustat prints it (MiB, device total)
};

// The seed's figure for one identity count and column, or nothing where it has none (not
// run, or out of memory).
std::optional<SeedFigure> seed_figure(std::int64_t identities, const std::string& column);
// The identity counts of the seed's benchmark table (125 000 ... 29 000 000).
std::vector<std::int64_t> seed_benchmark_identities();

}  // namespace pfc
