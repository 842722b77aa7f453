// Writes a checkpoint, collectively over all ranks: each rank writes its class-centre shard
// into step_NNNNNNN.tmp, then rank 0 writes model.h5 (backbone, optimizer and training state,
// and the virtual [classes, emb] view over the shards), syncs, renames the folder to
// step_NNNNNNN, points `latest` at it (last), and deletes older checkpoints beyond
// keep_checkpoints. A failure on any rank throws on every rank and leaves `latest` and the
// earlier checkpoints as they were (and no half-written folder); a state holding NaN, an
// infinity or an absurd value is not written at all (UnusableCheckpoint, checkpoint_values.h).
// Every write, close and sync is checked, and model.h5 is read back before the folder gets its
// final name. The root must be on a file system every rank sees.
#pragma once

#include <cstdint>
#include <filesystem>

#include "comm/comm.h"
#include "io/checkpoint.h"
#include "io/checkpoint_layout.h"

namespace pfc {

// checkpoint.parameters, moments and buffers are used on rank 0 only; every rank gives its
// shard. Folders for later steps than this one (left by an abandoned run that went further)
// are deleted with the old ones. Returns the checkpoint written.
CheckpointInfo write_checkpoint(Comm& comm, const std::filesystem::path& root,
                                const Checkpoint& checkpoint, std::int64_t keep_checkpoints);

}  // namespace pfc
