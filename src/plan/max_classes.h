// The largest num_classes a config fits on its device, per classifier storage type: plans
// (run_plan.h) of the same config at other class counts, searched by bisection. A plan is exact
// and its need grows with num_classes (the shards, the sampled rows, the logits), so the answer
// is the largest count whose plan fits, to a resolution of one part in 10^4 of it (`pfc plan
// --max-classes`, for f32, f16 and bf16), or coarser: pfc train's memory check names the
// largest count to 1 % when its plan refuses a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/run_plan.h"

namespace pfc {

struct MaxClasses {
  std::string storage;             // classifier_storage
  std::int64_t num_classes = 0;    // 0: not even one class per rank fits
  std::int64_t needed_bytes = 0;   // the plan's need per rank at num_classes
  std::int64_t available_bytes = 0;
  int plans = 0;                   // plans it took
  // Set when the search met a class count the planned backend cannot run at all (a GEMM
  // beyond the BLAS's int): what refused it. Such a count does not fit, whatever the memory.
  std::string refused;
};

// Collective over comm, as make_plan. cfg.device is "meta"; its num_classes is ignored. The
// search stops once what fits and what does not are within `resolution` of each other
// (relative). A count whose plan throws, once a smaller one has planned, is one the planned
// backend refuses (MaxClasses::refused); a throw at the smallest count is the config's own.
MaxClasses largest_num_classes(const Config& cfg, const std::string& storage, Comm& comm,
                               MetaBackend& backend, const PlanRequest& request,
                               double resolution = 1e-4);

// "6200000 classes with classifier_storage = "f32", 11900000 with "f16"" (what a refusal
// names).
std::string describe_max_classes(const std::vector<MaxClasses>& found);

// What `pfc plan --max-classes` prints: the device, the config, and a row per storage type.
std::string format_max_classes(const std::vector<MaxClasses>& found, const Config& cfg,
                               const GpuSpec* gpu, int world_size);

}  // namespace pfc
