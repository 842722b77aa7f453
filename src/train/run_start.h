// How a training run starts: from scratch, or from which checkpoints (the preferred first),
// and whether it continues the run its output folder already holds. Decided from the config
// and the file system before anything is written, so that the output guard can refuse a
// folder in time (train/output_guard.h).
#pragma once

#include "config/config.h"
#include "io/checkpoint_layout.h"

namespace pfc {

struct RunStart {
  ResumeCandidates candidates;    // none: a fresh start
  bool continues_output = false;  // the candidates are the output folder's own checkpoints
};

// resume = true: the output's checkpoints (pfc::UsageError when it holds none); resume_from:
// what it names (pfc::UsageError when that is no checkpoint); else a fresh start.
RunStart plan_run_start(const Config& cfg);

}  // namespace pfc
