// The training loop of `pfc train`: the seed's train.py in one SPMD program. Each step
// (training_step.h): gradient_acc micro-batches of batch -> iresnet -> PartialFC (loss,
// embedding gradient) -> backbone backward, then gradient all-reduce, loss-scale check,
// clipping -> the optimiser (SGD or AdamW) on the backbone and the class centres; every
// `frequent` steps a log line and a metrics.h5 row; checkpoints on schedule and on signals.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "comm/comm.h"
#include "config/config.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_room.h"
#include "train/run_start.h"

namespace pfc {

struct TrainerRun {
  std::int64_t steps_done = 0;  // optimizer steps completed, resumed ones included
  bool stopped_by_signal = false;  // a stop signal ended it before its last step
  std::string metrics_path;
};

// Collective over comm. Throws pfc::Error on failure; an allocation that does not fit is
// recorded in metrics.h5 (status "out_of_memory", needed vs available) before it throws.
// `start` is decide_run_start(cfg), which the caller has let past check_output_folder before
// writing anything into the output folder.
TrainerRun train(const Config& cfg, const RunStart& start, Comm& comm, Backend& backend,
                 const std::string& command_line);

// Collective over comm: writes, into cfg.output's checkpoint folder, the checkpoint a new run
// of cfg starts from, as its step 0 with nothing trained: the network set up as train() sets
// it up (cfg.pretrained's backbone when given, new class centres, a fresh optimiser). What
// `pfc import` makes; `resume = true` then continues it as the run train() would have been.
// The caller has checked the output folder (check_output_folder).
CheckpointInfo write_start_checkpoint(const Config& cfg, Comm& comm, Backend& backend);

// The memory ledger's peaks while `steps` training steps of cfg are set up and taken on
// backend and comm, as train() measures them, but with nothing written (no metrics, log lines
// or checkpoints): what a plan runs on the meta backend, and what pfc train checks against the
// memory it has before it allocates anything real.
struct StepsMemory {
  MemoryPeaks setup_peaks{};     // each purpose's peak while the model and classifier are built
  std::int64_t setup_peak = 0;   // the total's
  MemoryPeaks step_peaks{};      // each purpose's peak over the steps (metrics.h5 /memory)
  std::int64_t step_peak = 0;    // the total's peak over the steps (metrics.h5 mem_peak_bytes)
  CheckpointCost checkpoint;     // what a checkpoint of the run costs (disk, host memory)
};

// Collective over comm. on_step_end(n) runs when n steps are done: after the setup (0), then
// after each step; a plan reads there what the meta backend has counted.
StepsMemory measure_steps(const Config& cfg, Comm& comm, Backend& backend, std::int64_t steps,
                          const std::function<void(std::int64_t)>& on_step_end = {});

}  // namespace pfc
