// A shard file of a checkpoint (shard_RRRRR.h5): which class rows it holds, read from its
// attributes and checked against its datasets. Both the writer (before it maps the shards
// into model.h5) and the reader (before it reads rows through that map) use it, because
// HDF5 reads a missing virtual-dataset source as fill values instead of failing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pfc {

struct ShardExtent {
  std::int64_t class_start = 0;
  std::int64_t num_local = 0;
};

// Throws pfc::Error naming the file when it is missing, not HDF5, or its /weight or one of the
// optimiser's `moments` (/momentum, /exp_avg, ...) is not [num_local, embedding_size].
ShardExtent read_shard_extent(const std::filesystem::path& file, std::int64_t embedding_size,
                              const std::vector<std::string>& moments);

}  // namespace pfc
