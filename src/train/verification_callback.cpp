#include "train/verification_callback.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "core/fault_injection.h"
#include "eval/check_verification_bins.h"
#include "eval/verify_on_ranks.h"
#include "train/training_log.h"

namespace pfc {

VerificationCallback::VerificationCallback(const Config& cfg, Comm& comm, bool leader)
    : comm_(comm), leader_(leader), verbose_(cfg.verbose),
      fault_(injected_fault_from_environment()) {
  if (cfg.val_targets.empty()) return;
  if (cfg.rec == "synthetic")
    throw UsageError(fmt::format(
        "val_targets = [{}] are read from <rec>/<name>.bin, but rec = \"synthetic\" names no "
        "folder; set rec to the dataset folder that holds them, or val_targets = []",
        fmt::join(cfg.val_targets, ", ")));
  std::vector<std::shared_ptr<const VerificationBin>> bins;
  for (const std::string& name : cfg.val_targets)
    bins.push_back(std::make_shared<const VerificationBin>(verification_bin_path(cfg.rec, name)));
  check_verification_bins(bins, cfg.image_size, comm.rank(), comm.world_size());
  for (auto& bin : bins) {
    if (leader_)
      spdlog::info("verification target {}: {} pairs from {}", bin->name(), bin->pairs(),
                   bin->path());
    targets_.push_back({std::move(bin), 0.0});
  }
  comm.barrier();
}

bool VerificationCallback::due(std::int64_t step, std::int64_t last_step) const {
  return !targets_.empty() && step > 0 && (step % verbose_ == 0 || step == last_step);
}

void VerificationCallback::recall_highest(const MetricsWriter& metrics) {
  for (const VerificationSeries& series : metrics.verifications())
    for (Target& t : targets_)
      if (t.bin->name() == series.name)
        for (const VerificationRow& row : series.rows)
          t.highest = std::max(t.highest, row.accuracy);
}

void VerificationCallback::run(std::int64_t step, Backbone& backbone, MetricsWriter* metrics) {
  const auto start = std::chrono::steady_clock::now();
  if (!recalled_ && metrics) recall_highest(*metrics);
  recalled_ = true;
  // Rank 0's running statistics are the model's (its checkpoint saves them, as
  // DistributedDataParallel broadcasts them); the other ranks' differ by their batches.
  // Training never reads them (it normalises with batch statistics), so every rank takes
  // rank 0's and all embed with the same network.
  for (Buffer* b : backbone.buffers()) comm_.broadcast(b->value, 0);
  check_injected_fault(fault_, comm_.rank(), step, FaultPoint::verification);
  for (Target& t : targets_) {
    const VerificationResult r = verify_on_ranks(backbone, t.bin, comm_);
    t.highest = std::max(t.highest, r.accuracy);
    if (!leader_) continue;
    const std::string& name = t.bin->name();
    log_progress(fmt::format("[{}][{}]XNorm: {:f}", name, step, r.xnorm));
    log_progress(fmt::format("[{}][{}]Accuracy-Flip: {:1.5f}+-{:1.5f}", name, step, r.accuracy,
                             r.accuracy_std));
    log_progress(fmt::format("[{}][{}]Accuracy-Highest: {:1.5f}", name, step, t.highest));
    if (metrics)
      metrics->append_verification(name, {step, r.accuracy, r.accuracy_std, r.accuracy_noflip,
                                          r.xnorm, r.val, r.val_std, r.far});
  }
  if (leader_)
    spdlog::info("verification at step {}: {} target(s) in {:.1f} s", step, targets_.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace pfc
