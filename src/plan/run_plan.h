// A plan: the run a config describes, stepped on the meta backend (planning the cpu or cuda
// backend) with the comm the run would have, and what it takes: every rank's memory by purpose
// (exact, from the memory ledger) plus what the device holds beyond it (modelled,
// device_overhead_model.h), whether that fits, the arithmetic and collectives of one step, and
// for a cuda plan the least time a step can take on a named GPU (step_bound.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backend/meta/meta_backend.h"
#include "comm/counting_comm.h"
#include "config/config.h"
#include "io/checkpoint_room.h"
#include "plan/device_overhead_model.h"
#include "plan/gpu_specs.h"
#include "plan/step_bound.h"

namespace pfc {

struct PlanRequest {
  // Steps planned; the last one's arithmetic and collectives are reported (the first allocates
  // what later steps keep, so two give a steady step).
  std::int64_t steps = 2;
  // cuda plans: the GPU whose peak rates bound the step (may be null: no bound).
  const GpuSpec* gpu = nullptr;
  // What one rank has for what the plan needs: the arena pfc would reserve on the GPU, or this
  // host's memory for one rank (the caller knows which, and how many ranks share it).
  std::int64_t available_bytes = 0;
};

struct RankPlan {
  MemoryPeaks exact_by_purpose{};  // pfc's tensors: each purpose's peak over the steps
  std::int64_t step_peak = 0;      // the ledger's total peak over the steps (a run's mem_peak)
  std::int64_t exact_peak = 0;     // the ledger's total peak, over setup and steps
  std::vector<ModelledTerm> modelled;
  std::int64_t needed_bytes = 0;   // exact + the modelled terms that share the arena (cpu: all)
  std::int64_t total_bytes = 0;    // exact + every modelled term: what the device holds
  std::int64_t available_bytes = 0;

  std::int64_t modelled_bytes() const { return total_bytes - exact_peak; }
  bool fits() const { return needed_bytes <= available_bytes; }
};

struct Plan {
  BackendKind plan_for = BackendKind::cuda;
  const GpuSpec* gpu = nullptr;
  int world_size = 1;
  int rank = 0;                     // this process's
  std::int64_t global_batch = 0;
  std::int64_t steps = 0;           // planned
  std::vector<RankPlan> ranks;      // every rank's in rank order; emulated: the one played
  ArithmeticTally step;             // this rank's last planned step
  CollectiveTally collectives;      // its collectives in that step
  std::optional<StepBound> bound;   // when a GPU was named
  CheckpointCost checkpoint;        // a checkpoint of the run: its files, the host memory staged
  double seconds = 0;               // how long planning took (wall clock)

  // The rank that needs the most (the one a fit is decided by).
  const RankPlan& largest() const;
  bool fits() const;
};

// Collective over comm (which it counts through); `backend` holds nothing else while it runs.
// A RecordIO config is planned on synthetic batches of its shape: no dataset is read.
Plan make_plan(const Config& cfg, Comm& comm, MetaBackend& backend, const PlanRequest& request);

// The memory the CUDA backend's default arena would reserve on `gpu`: kCudaArenaFreeFraction of
// what the modelled CUDA context leaves.
std::int64_t planned_arena_bytes(const GpuSpec& gpu);

}  // namespace pfc
