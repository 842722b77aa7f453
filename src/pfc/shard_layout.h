// Which classes a rank holds: arcface_torch's split of C classes over W ranks, where the first
// C % W ranks hold one class more, and how many of them PartialFC samples each step.
#pragma once

#include <cstdint>

namespace pfc {

struct ShardLayout {
  std::int64_t num_classes = 0;
  int world = 1;
  int rank = 0;
  std::int64_t num_local = 0;    // C / W + (rank < C % W)
  std::int64_t class_start = 0;  // (C / W) * rank + min(rank, C % W)
  std::int64_t num_sample = 0;   // int(sample_rate * num_local)

  // Throws UsageError for C < 1, a sample_rate outside [0, 1] (0: the positives alone), or a
  // rank outside [0, world).
  static ShardLayout make(std::int64_t num_classes, int world, int rank, double sample_rate);

  std::int64_t class_end() const { return class_start + num_local; }
  bool owns(std::int64_t global_class) const {
    return global_class >= class_start && global_class < class_end();
  }
  // The rank whose shard holds global_class (in [0, num_classes)).
  int owner_of(std::int64_t global_class) const;
  // The largest shard's row count, ceil(C / W): what a padded gather moves per rank.
  std::int64_t max_local() const { return (num_classes + world - 1) / world; }
  // The layout of another rank of the same split.
  ShardLayout of_rank(int other_rank, double sample_rate) const {
    return make(num_classes, world, other_rank, sample_rate);
  }
};

}  // namespace pfc
