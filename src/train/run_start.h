// How `pfc train` begins: a new run, the continuation of the run in `output`, or a new run
// from another run's checkpoint. Decided from the config (resume, resume_from) and the
// checkpoints `output` holds, before anything is written, so that the output guard
// (train/output_guard.h) can refuse a start that would overwrite another run. resume = "auto"
// is the one setting a requeued job can always carry: its first attempt starts, every later
// one continues.
#pragma once

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
  // For continue_run and from_checkpoint: the checkpoints to try, the preferred first (the
  // one `latest` names), the older ones as fallbacks should it prove damaged.
  ResumeCandidates candidates;
  std::string reason;  // a line for the log saying which and why; "" for a plain new run
  // resume = "auto" finding no checkpoint in `output`: what an earlier attempt of this job left
  // there (a metrics.h5, a checkpoint it did not finish) is replaced as the run starts over.
  bool starts_over = false;

  // Whether the run may write into an `output` that already holds a run (output_guard.h).
  bool owns_output() const { return kind == StartKind::continue_run || starts_over; }
};

// Reads `output`'s checkpoints (every rank may call it). Throws pfc::UsageError for resume =
// true without a checkpoint, and for a resume_from that names no checkpoint.
RunStart decide_run_start(const Config& cfg);

}  // namespace pfc
