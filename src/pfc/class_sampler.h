// PartialFC's choice of class centres for one step on one shard: every positive class of the
// shard (a label of the global batch) plus uniformly drawn negatives up to num_sample, sorted;
// and every sample's label re-indexed into that set. The draw is a pure function of a
// counter-RNG key (seed, step, rank), so nothing about it needs checkpointing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pfc/shard_layout.h"

namespace pfc {

struct ClassSample {
  std::vector<std::int64_t> index;        // sorted, unique local class indices
  std::vector<std::int64_t> local_label;  // per sample: position in index, -1 if off-shard
};

// The sampler's key for a step on a rank: stream_key(seed, "pfc.sampler", step, rank).
std::uint64_t sampler_key(std::uint64_t seed, std::int64_t step, int rank);

// The positives plus num_sample - positives uniform negatives (only the positives when they
// alone reach num_sample). labels: the gathered global batch, each in [0, num_classes).
ClassSample sample_classes(std::span<const std::int64_t> labels, const ShardLayout& layout,
                           std::uint64_t key);

// How many classes sample_classes picks, without drawing them: the shard's positives, or
// num_sample when they are fewer. What a plan needs (the meta device holds no index).
std::int64_t sample_size(std::span<const std::int64_t> labels, const ShardLayout& layout);

// The same, from a given set instead of a draw: global_index is a sorted set of global class
// ids (a golden file's sampled_index); this shard keeps the ones it owns. Every positive of
// the shard must be in it.
ClassSample injected_classes(std::span<const std::int64_t> labels, const ShardLayout& layout,
                             std::span<const std::int64_t> global_index);

// Labels relative to the whole shard (every class used, sample rate 1): label - class_start,
// or -1 where another rank owns the class.
std::vector<std::int64_t> shard_local_labels(std::span<const std::int64_t> labels,
                                             const ShardLayout& layout);

}  // namespace pfc
