#include "pfc/shard_gather.h"

namespace pfc {

Tensor gather_class_shards(Backend& backend, Comm& comm, const ShardLayout& layout,
                           const Tensor& shard) {
  PFC_CHECK(shard.rank() == 2 && shard.dim(0) == layout.num_local,
            "gather_class_shards: shard {} of rank {} must have {} rows", shard.describe(),
            layout.rank, layout.num_local);
  PFC_CHECK(comm.world_size() == layout.world && comm.rank() == layout.rank,
            "gather_class_shards: the layout is rank {} of {}, the communicator rank {} of {}",
            layout.rank, layout.world, comm.rank(), comm.world_size());
  const std::int64_t cols = shard.dim(1);
  // all_gather needs equal blocks: every shard is padded to the largest one.
  const std::int64_t padded = layout.max_local();
  Tensor send = backend.zeros({padded, cols}, shard.dtype(), MemoryPurpose::comm);
  Tensor own = send.rows(0, layout.num_local);
  backend.copy(shard, own);
  Tensor all = backend.empty({padded * layout.world, cols}, shard.dtype(), MemoryPurpose::comm);
  comm.all_gather(send, all);
  Tensor global = Tensor::host({layout.num_classes, cols}, shard.dtype());
  for (int r = 0; r < layout.world; ++r) {
    const ShardLayout other = layout.of_rank(r, 1.0);
    Tensor dst = global.rows(other.class_start, other.class_end());
    backend.copy(all.rows(r * padded, r * padded + other.num_local), dst);
  }
  return global;
}

}  // namespace pfc
