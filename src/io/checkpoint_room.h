// Room for a checkpoint, checked before it is staged and written: its files against the free
// space of its folder's file system, and the host memory a rank copies its part into (the
// backbone on rank 0, the rank's class-centre shard and its optimiser moments) against what
// this host has available. A checkpoint of the largest cells (29M identities with f16 centres:
// about 59 GB) would otherwise fill the disk or the host half-way, after the copies were made.
// A refusal names both figures and leaves `latest` and the earlier checkpoints as they were.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "comm/comm.h"
#include "core/error.h"

namespace pfc {

struct CheckpointCost {
  std::int64_t disk_bytes = 0;          // every file: the backbone's and every rank's shard
  std::int64_t host_bytes = 0;          // what this rank copies to host memory to write
  std::int64_t largest_host_bytes = 0;  // the most one rank copies (rank 0, with the backbone)
};

struct CheckpointRoom {
  std::int64_t free_disk_bytes = 0;
  std::string disk_folder;  // whose file system was asked: the root, or its nearest parent
  std::int64_t free_host_bytes = 0;
  std::string host_source;  // "MemAvailable" or the cgroup file that limited it
};

// The checkpoint does not fit; nothing was staged or written.
class CheckpointRefused : public Error {
 public:
  using Error::Error;
};

// What the file system of `root` (of its nearest existing parent, before the first
// checkpoint) and this host have free now.
CheckpointRoom measure_checkpoint_room(const std::filesystem::path& root);

// Collective over comm: throws CheckpointRefused on every rank when, on any rank, the whole
// checkpoint does not fit the free disk space or this rank's part does not fit its host's
// available memory. The message names the checkpoint folder, the figures, and the checkpoint
// `latest` stays on. Each rank holds its own part against its host's memory as it is now.
void check_checkpoint_room(Comm& comm, const std::filesystem::path& root, std::int64_t step,
                           const CheckpointCost& cost, const CheckpointRoom& room);

}  // namespace pfc
