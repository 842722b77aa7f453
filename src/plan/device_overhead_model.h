// What a device holds for a run beyond pfc's own tensors, which a plan cannot count and so
// models: the one place its constants live, each with its source (device_overhead_model.cpp).
// The device script (tests/gpu/run_on_device.sh) prints these against what a run measures
// (metrics.h5 device_overhead_bytes, the arena's peak), so that they can be replaced by
// measurements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend_kind.h"

namespace pfc {

struct ModelledTerm {
  std::string name;        // "cudnn_workspace"
  std::int64_t bytes = 0;
  bool in_arena = true;    // cuda: inside pfc's arena (counts against it) or beside it
  std::string source;      // where the figure comes from
};

struct OverheadFacts {
  int world_size = 1;                     // ranks of the planned job (NCCL's peers)
  std::int64_t host_buffer_bytes = 0;     // cpu: the peak of the process's host allocations
  std::int64_t host_scratch_bytes = 0;    // cpu: the largest kernel scratch outside the ledger
};

// The modelled terms of a plan for plan_for (cpu or cuda).
std::vector<ModelledTerm> modelled_overhead(BackendKind plan_for, const OverheadFacts& facts);

}  // namespace pfc
