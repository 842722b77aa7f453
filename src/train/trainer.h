// The training loop of `pfc train`: the seed's train.py in one SPMD program. Each step
// (training_step.h): gradient_acc micro-batches of batch -> iresnet -> PartialFC (loss,
// embedding gradient) -> backbone backward, then gradient all-reduce, loss-scale check,
// clipping -> the optimiser (SGD or AdamW) on the backbone and the class centres; every
// `frequent` steps a log line and a metrics.h5 row; checkpoints on schedule and on signals.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "comm/comm.h"
#include "config/config.h"

namespace pfc {

struct TrainerRun {
  std::int64_t steps_done = 0;  // optimizer steps completed, resumed ones included
  bool stopped_by_signal = false;  // a stop signal ended it before its last step
  std::string metrics_path;
};

// Collective over comm. Throws pfc::Error on failure; an allocation that does not fit is
// recorded in metrics.h5 (status "out_of_memory", needed vs available) before it throws.
TrainerRun train(const Config& cfg, Comm& comm, Backend& backend, const std::string& command_line);

}  // namespace pfc
