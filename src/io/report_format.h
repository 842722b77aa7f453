// The text forms of the benchmark table: Markdown (the seed's two tables, speed and memory,
// ours beside the seed's) and CSV (one line per cell, for plotting: jobs/plot_report.py).
#pragma once

#include <string>

#include "io/report_table.h"

namespace pfc {

// Both tables with a heading, the unit, the setups measured and what "–" and "OOM" mean; for
// plans (pfc plan) a speed-bound table instead of measured speeds.
std::string format_report_markdown(const BenchTable& table);
// Header: identities,column,status,samples_per_s,seed_samples_per_s,mem_peak_gb,seed_mem_gb,
// mem_needed_gb,mem_available_gb,world_size,emulated,device,gpu_names,path,
// samples_per_s_with_comm (see samples_per_s_with_comm), mem_device_gb (mem_peak_gb plus the
// device memory outside pfc's allocations: what the seed's gpustat figure counts), network,
// setup (where it ran: "8 × NVIDIA H200", "8 ranks emulated on NVIDIA H200", "2 ranks on cpu",
// "8 ranks planned for Tesla V100-SXM2-32GB"), planned (1 for a plan, whose memory is planned:
// mem_device_gb = pfc's tensors + the modelled rest), samples_per_s_bound (a plan's speed bound
// on its GPU). One line per cell with a run or a seed figure; status "missing" where we have no
// run; the figures are empty where the run has none (not measured, out of memory, failed).
// GB = 1e9.
std::string format_report_csv(const BenchTable& table);

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a newline.
std::string csv_field(const std::string& value);

}  // namespace pfc
