// How `pfc train` begins: a new run, the continuation of the run in `output`, or a new run
// from another run's checkpoint. Decided from the config (resume, resume_from) and the
// checkpoints `output` holds, before anything is written, so that a start-up check can refuse
// a start that would overwrite another run. resume = "auto" is the one setting a requeued job
// can always carry: its first attempt starts, every later one continues.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "io/checkpoint_layout.h"

namespace pfc {

enum class StartKind {
  fresh,           // from initial weights
  continue_run,    // from a checkpoint of this output: the run goes on where it stopped
  from_checkpoint  // from a checkpoint elsewhere (resume_from): a new run in `output`
};

struct RunStart {
  StartKind kind = StartKind::fresh;
  std::optional<CheckpointInfo> checkpoint;  // for continue_run and from_checkpoint
  std::string reason;  // a line for the log saying which and why; "" for a plain new run
};

// Reads `output`'s checkpoints (every rank may call it). Throws pfc::UsageError for resume =
// true without a checkpoint, and what named_checkpoint throws for a bad resume_from.
RunStart decide_run_start(const Config& cfg);

}  // namespace pfc
