// The least time one training step can take on a named GPU, from what the step does (the meta
// backend's arithmetic and the collectives' bus bytes) and the GPU's peak rates: each resource
// must do its share, so the step takes at least as long as the slowest of them at its peak,
//   tensor-core FLOPs / f16 tensor rate, other FLOPs / f32 rate,
//   bytes read and written / memory bandwidth, bus bytes / link bandwidth,
// and at least their maximum even if everything overlapped perfectly. This is the "limit" a
// measured speed is held against; pfc itself does not overlap its collectives with compute.
#pragma once

#include <cstdint>
#include <string_view>

#include "backend/meta/arithmetic_tally.h"
#include "comm/counting_comm.h"
#include "plan/gpu_specs.h"

namespace pfc {

struct StepBound {
  double tensor_s = 0, other_s = 0, memory_s = 0, comm_s = 0;
  double step_s = 0;          // the largest of the four
  std::string_view limiter;   // "tensor cores" | "fp32 units" | "memory" | "interconnect"
  double samples_per_s = 0;   // the global batch over step_s: the speed limit of all ranks
};

StepBound bound_step(const Work& step, const CollectiveWork& comm, const GpuSpec& gpu,
                     std::int64_t global_batch);

}  // namespace pfc
