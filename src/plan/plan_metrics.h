// A plan's metrics.h5: written as a run's (io/metrics_writer.h), so that `pfc report` and h5py
// read plans like runs, with what was not measured left 0 (speed, loss, step time) and /plan
// added. The run's datasets hold the planned memory: /memory/peak_bytes_by_purpose is every
// rank's exact peak per purpose, /steps/mem_peak_bytes and /summary mem_peak_bytes pfc's
// tensors, /summary device_overhead_bytes the modelled rest, status "ok", or "out_of_memory"
// with mem_needed_bytes and mem_available_bytes when it does not fit.
//
//   /plan  attributes: plan_for, gpu (key, "" for cpu plans), gpu_name, device_memory_bytes,
//          steps, seconds, fits (0/1), and for a named GPU the bound: step_time_bound_s,
//          samples_per_s_bound, limiter, tensor_s, other_s, memory_s, comm_s
//   /plan/needed_bytes, total_bytes, available_bytes, exact_peak_bytes  [ranks] i64
//   /plan/modelled_bytes   [terms] i64 (the largest rank's), attribute names (comma-separated)
//   /plan/arithmetic       [primitives, 5] f64: calls, tensor_flops, other_flops, bytes_read,
//                          bytes_written of one step of this rank; attribute primitives
//   /plan/collectives      [kinds, 4] f64: calls, payload bytes, hops, bus bytes; attribute kinds
#pragma once

#include <string>

#include "config/config.h"
#include "io/metrics_writer.h"
#include "plan/run_plan.h"

namespace pfc {

void write_plan_metrics(const std::string& path, const Config& cfg, const RunInfo& info,
                        const Plan& plan);

}  // namespace pfc
