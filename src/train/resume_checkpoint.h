// Reading the checkpoint a run continues from, agreed by every rank. Each rank reads its part
// (the backbone and its own class rows) of the first candidate; when any rank finds it damaged
// (a checksum that does not match, a missing shard, a value that is not finite) every rank
// passes on to the next older candidate, with a warning, so that one bad checkpoint costs the
// steps since the previous one instead of the run.
#pragma once

#include <string>

#include "comm/comm.h"
#include "config/config.h"
#include "io/checkpoint.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_reader.h"

namespace pfc {

struct ResumedCheckpoint {
  CheckpointInfo info;
  Checkpoint checkpoint;  // this rank's part
  // Whether `latest` did not lead here (missing, dangling, or naming a damaged checkpoint):
  // a run that continues its own folder then points `latest` at this one.
  bool latest_outdated = false;
};

// Collective. `leader` prints the warnings and notices that concern the whole run (every rank
// prints why it could not read a checkpoint). Throws pfc::UsageError (on every rank) when a
// checkpoint does not fit the config, and pfc::Error when no candidate can be read.
ResumedCheckpoint read_first_readable(Comm& comm, const ResumeCandidates& candidates,
                                      const CheckpointRequest& request, bool leader);

// A notice naming every key that decides what the run computes (KeyRole::training) in which
// `cfg` differs from the config the checkpoint was saved with, with both values; "" when none.
// The checkpoint's state then carries over to the new values: it holds the classifier as one
// [classes, embedding] matrix with its moments whatever the method (dp saves the rows mp would
// give each rank), so method, sample_rate, gradient_acc and the loss's settings may change;
// what cannot carry over (another number of classes, embedding size, optimizer or backbone)
// is refused when the checkpoint is read.
std::string describe_changed_keys(const ResumedCheckpoint& resumed, const Config& cfg);

}  // namespace pfc
