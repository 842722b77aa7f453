// For the tests that hold a plan against a run: a config of the tiny network of
// input/smoke.toml with some keys set, and what a run recorded in its metrics.h5.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/memory_ledger.h"

namespace pfc::test {

// input/smoke.toml with `sets` (key=value), 2 steps, each logged, no checkpoints, into output.
Config smoke_config(const std::vector<std::string>& sets, const std::string& output);

// /memory/peak_bytes_by_purpose: one row per rank.
std::vector<MemoryPeaks> recorded_peaks(const std::string& metrics_path);
// /steps/mem_peak_bytes: each rank's largest.
std::vector<std::int64_t> recorded_total_peaks(const std::string& metrics_path);

}  // namespace pfc::test
