// Reading the checkpoint a run continues from, agreed by every rank. Each rank reads its part
// (the backbone and its own class rows) of the first candidate; when any rank finds it damaged
// (a checksum that does not match, a missing shard, a value that is not finite) every rank
// passes on to the next older candidate, with a warning, so that one bad checkpoint costs the
// steps since the previous one instead of the run.
#pragma once

#include "comm/comm.h"
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

}  // namespace pfc
