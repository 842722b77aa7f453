// Reassembles a class-sharded matrix (each rank's [num_local, cols] rows) into the global
// [num_classes, cols] matrix on the host of every rank. For tests, golden checks and exports:
// it moves the whole matrix, so it is not on the training path.
#pragma once

#include "backend/backend.h"
#include "comm/comm.h"
#include "pfc/shard_layout.h"

namespace pfc {

// Collective. shard lives on the backend's device; the result is a host tensor.
Tensor gather_class_shards(Backend& backend, Comm& comm, const ShardLayout& layout,
                           const Tensor& shard);

}  // namespace pfc
