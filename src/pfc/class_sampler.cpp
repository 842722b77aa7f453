#include "pfc/class_sampler.h"

#include <algorithm>

#include "core/counter_rng.h"
#include "core/error.h"
#include "pfc/uniform_subset.h"

namespace pfc {
namespace {

// Sorted unique local indices of the shard's classes that appear in labels.
std::vector<std::int64_t> positives_of(std::span<const std::int64_t> labels,
                                       const ShardLayout& layout) {
  std::vector<std::int64_t> positives;
  for (std::int64_t label : labels)
    if (layout.owns(label)) positives.push_back(label - layout.class_start);
  std::sort(positives.begin(), positives.end());
  positives.erase(std::unique(positives.begin(), positives.end()), positives.end());
  return positives;
}

// Each label's position in the sorted index, or -1 when this shard does not own it.
std::vector<std::int64_t> remap(std::span<const std::int64_t> labels, const ShardLayout& layout,
                                const std::vector<std::int64_t>& index) {
  std::vector<std::int64_t> local(labels.size(), -1);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (!layout.owns(labels[i])) continue;
    const std::int64_t c = labels[i] - layout.class_start;
    const auto it = std::lower_bound(index.begin(), index.end(), c);
    PFC_CHECK(it != index.end() && *it == c,
              "the sampled classes of rank {} lack class {}, the label of sample {}",
              layout.rank, labels[i], i);
    local[i] = it - index.begin();
  }
  return local;
}

}  // namespace

std::uint64_t sampler_key(std::uint64_t seed, std::int64_t step, int rank) {
  return stream_key(seed, "pfc.sampler", static_cast<std::uint64_t>(step),
                    static_cast<std::uint64_t>(rank));
}

ClassSample sample_classes(std::span<const std::int64_t> labels, const ShardLayout& layout,
                           std::uint64_t key) {
  ClassSample s;
  std::vector<std::int64_t> positives = positives_of(labels, layout);
  const auto num_positive = static_cast<std::int64_t>(positives.size());
  if (num_positive >= layout.num_sample) {
    s.index = std::move(positives);
  } else {
    // Negative j is the j-th class of the shard that is not a positive; uniform_subset picks
    // which, and the walk below turns them into class ids merged with the positives in order.
    const std::vector<std::int64_t> negatives = uniform_subset(
        layout.num_local - num_positive, layout.num_sample - num_positive, key);
    s.index.reserve(static_cast<std::size_t>(layout.num_sample));
    std::size_t below = 0;  // positives below the current class
    for (std::int64_t j : negatives) {
      while (below < positives.size() && positives[below] <= j + static_cast<std::int64_t>(below))
        s.index.push_back(positives[below++]);
      s.index.push_back(j + static_cast<std::int64_t>(below));
    }
    s.index.insert(s.index.end(), positives.begin() + static_cast<std::ptrdiff_t>(below),
                   positives.end());
  }
  s.local_label = remap(labels, layout, s.index);
  return s;
}

std::int64_t sample_size(std::span<const std::int64_t> labels, const ShardLayout& layout) {
  return std::max(static_cast<std::int64_t>(positives_of(labels, layout).size()),
                  layout.num_sample);
}

ClassSample injected_classes(std::span<const std::int64_t> labels, const ShardLayout& layout,
                             std::span<const std::int64_t> global_index) {
  ClassSample s;
  for (std::size_t i = 0; i < global_index.size(); ++i) {
    const std::int64_t c = global_index[i];
    PFC_CHECK(c >= 0 && c < layout.num_classes,
              "injected sampled class {} (entry {}) is outside [0, {})", c, i,
              layout.num_classes);
    PFC_CHECK(i == 0 || global_index[i - 1] < c,
              "injected sampled classes must be sorted and unique: entry {} is {} after {}", i, c,
              global_index[i - 1]);
    if (layout.owns(c)) s.index.push_back(c - layout.class_start);
  }
  s.local_label = remap(labels, layout, s.index);
  return s;
}

std::vector<std::int64_t> shard_local_labels(std::span<const std::int64_t> labels,
                                             const ShardLayout& layout) {
  std::vector<std::int64_t> local(labels.size(), -1);
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (layout.owns(labels[i])) local[i] = labels[i] - layout.class_start;
  return local;
}

}  // namespace pfc
