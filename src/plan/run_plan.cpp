#include "plan/run_plan.h"

#include <algorithm>
#include <chrono>

#include "train/trainer.h"

namespace pfc {

namespace {

// One f64 row per rank, gathered so that every rank's plan is known everywhere: the ledger's
// per-purpose step peaks, its total peak over the steps and over everything, the host buffers'
// peak and the largest host scratch (cpu plans), and the bytes the rank has. Byte counts stay
// exact in f64 below 2^53.
constexpr std::int64_t kRowWidth = static_cast<std::int64_t>(kMemoryPurposeCount) + 5;

Tensor rank_row(const StepsMemory& m, std::int64_t host_buffers, std::int64_t host_scratch,
                std::int64_t available) {
  Tensor row = Tensor::host({1, kRowWidth}, DType::f64);
  double* r = row.data<double>();
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p) r[p] = static_cast<double>(m.step_peaks[p]);
  double* tail = r + kMemoryPurposeCount;
  tail[0] = static_cast<double>(m.step_peak);
  tail[1] = static_cast<double>(std::max(m.setup_peak, m.step_peak));
  tail[2] = static_cast<double>(host_buffers);
  tail[3] = static_cast<double>(host_scratch);
  tail[4] = static_cast<double>(available);
  return row;
}

RankPlan rank_plan(const double* r, BackendKind plan_for, int world_size) {
  RankPlan p;
  for (std::size_t i = 0; i < kMemoryPurposeCount; ++i)
    p.exact_by_purpose[i] = static_cast<std::int64_t>(r[i]);
  const double* tail = r + kMemoryPurposeCount;
  p.step_peak = static_cast<std::int64_t>(tail[0]);
  p.exact_peak = static_cast<std::int64_t>(tail[1]);
  OverheadFacts facts;
  facts.world_size = world_size;
  facts.host_buffer_bytes = static_cast<std::int64_t>(tail[2]);
  facts.host_scratch_bytes = static_cast<std::int64_t>(tail[3]);
  p.available_bytes = static_cast<std::int64_t>(tail[4]);
  p.modelled = modelled_overhead(plan_for, facts);
  p.needed_bytes = p.total_bytes = p.exact_peak;
  for (const ModelledTerm& t : p.modelled) {
    p.total_bytes += t.bytes;
    if (t.in_arena) p.needed_bytes += t.bytes;
  }
  return p;
}

}  // namespace

const RankPlan& Plan::largest() const {
  return *std::max_element(ranks.begin(), ranks.end(), [](const RankPlan& a, const RankPlan& b) {
    return a.needed_bytes - a.available_bytes < b.needed_bytes - b.available_bytes;
  });
}

bool Plan::fits() const {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankPlan& r) { return r.fits(); });
}

std::int64_t planned_arena_bytes(const GpuSpec& gpu) {
  std::int64_t context = 0;
  for (const ModelledTerm& t : modelled_overhead(BackendKind::cuda, {}))
    if (!t.in_arena) context += t.bytes;
  return static_cast<std::int64_t>(kCudaArenaFreeFraction *
                                   static_cast<double>(gpu.memory_bytes - context));
}

Plan make_plan(const Config& run_cfg, Comm& comm, MetaBackend& backend,
               const PlanRequest& request) {
  PFC_CHECK(request.steps >= 1, "a plan takes at least one step, not {}", request.steps);
  // A plan reads no dataset: a RecordIO run is planned on synthetic batches of the same shape
  // (uniform labels), so that planning neither reads the data nor warns about its records.
  Config cfg = run_cfg;
  if (cfg.rec != "synthetic") {
    cfg.rec = "synthetic";
    cfg.synthetic_labels = "uniform";
  }
  const auto start = std::chrono::steady_clock::now();
  CountingComm counted(comm);
  MemoryLedger& host_ledger = host_allocator().ledger();
  host_ledger.reset_peak();
  const std::int64_t host_before = host_ledger.snapshot().total_in_use;

  ArithmeticTally before_last;
  CollectiveTally comm_before_last;
  const StepsMemory memory =
      measure_steps(cfg, counted, backend, request.steps, [&](std::int64_t done) {
        // The tallies as the last step begins: what it adds is the step's.
        if (done + 1 != request.steps) return;
        before_last = backend.tally();
        comm_before_last = counted.tally();
      });

  Plan plan;
  plan.plan_for = backend.plan_for();
  plan.gpu = request.gpu;
  plan.world_size = comm.world_size();
  plan.rank = comm.rank();
  plan.global_batch = cfg.batch_size * comm.world_size();
  plan.steps = request.steps;
  plan.step = backend.tally().since(before_last);
  plan.collectives = collectives_since(counted.tally(), comm_before_last);
  plan.checkpoint = memory.checkpoint;

  const std::int64_t host_buffers = host_ledger.snapshot().total_peak - host_before;
  const Tensor mine = rank_row(memory, host_buffers, backend.largest_host_scratch_bytes(),
                               request.available_bytes);
  // An emulated run is one process: its modelled peers would only repeat its row.
  const Tensor all = cfg.emulate_world_size > 0 ? mine : comm.all_gather_host(mine);
  for (std::int64_t r = 0; r < all.dim(0); ++r)
    plan.ranks.push_back(rank_plan(all.data<double>() + r * kRowWidth, plan.plan_for,
                                   plan.world_size));
  if (request.gpu && plan.plan_for == BackendKind::cuda)
    plan.bound = bound_step(plan.step.total(), total(plan.collectives), *request.gpu,
                            plan.global_batch);
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace pfc
