#include "data/distributed_sampler.h"

#include <limits>
#include <numeric>
#include <utility>

#include "core/counter_rng.h"
#include "core/error.h"

namespace pfc {

std::vector<std::uint32_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::uint32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  const std::uint64_t key = stream_key(seed, "data_order", static_cast<std::uint64_t>(epoch));
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(uniform53(key, static_cast<std::uint64_t>(i)) *
                                             static_cast<double>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

DistributedSampler::DistributedSampler(std::int64_t num_samples, std::int64_t batch_size,
                                       int rank, int world_size, std::uint64_t seed)
    : num_samples_(num_samples),
      batch_size_(batch_size),
      rank_(rank),
      world_size_(world_size),
      seed_(seed) {
  PFC_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, "rank {} of world size {}", rank,
            world_size);
  PFC_CHECK(batch_size >= 1, "batch size {} must be at least 1", batch_size);
  PFC_CHECK(num_samples <= std::numeric_limits<std::uint32_t>::max(),
            "{} samples: at most 2^32 - 1 are supported", num_samples);
  if (num_samples < global_batch())
    throw UsageError(fmt::format(
        "the dataset has {} samples, fewer than one global batch (batch_size {} x {} ranks = "
        "{}); lower batch_size or use more data",
        num_samples, batch_size, world_size, global_batch()));
}

void DistributedSampler::check(const DataPosition& position) const {
  if (position.epoch < 0 || position.samples_in_epoch < 0 ||
      position.samples_in_epoch > num_samples_)
    throw Error(fmt::format("data position (epoch {}, sample {}) does not fit a dataset of {} "
                            "samples",
                            position.epoch, position.samples_in_epoch, num_samples_));
}

GlobalBatch DistributedSampler::locate(const DataPosition& from, std::int64_t k) const {
  const std::int64_t g = global_batch();
  const std::int64_t left_in_epoch = (num_samples_ - from.samples_in_epoch) / g;
  if (k < left_in_epoch) return {from.epoch, from.samples_in_epoch + k * g};
  const std::int64_t later = k - left_in_epoch;
  return {from.epoch + 1 + later / batches_per_epoch(), later % batches_per_epoch() * g};
}

DataPosition DistributedSampler::after(const GlobalBatch& batch) const {
  return {batch.epoch, batch.offset + global_batch()};
}

std::shared_ptr<const std::vector<std::uint32_t>> DistributedSampler::order(
    std::int64_t epoch) const {
  std::lock_guard lock(mutex_);
  auto it = orders_.find(epoch);
  if (it != orders_.end()) return it->second;
  auto made = std::make_shared<const std::vector<std::uint32_t>>(
      epoch_order(num_samples_, seed_, epoch));
  orders_.emplace(epoch, made);
  while (orders_.size() > 2) orders_.erase(orders_.begin());
  return made;
}

std::vector<std::int64_t> DistributedSampler::rank_samples(const GlobalBatch& batch) const {
  const auto epoch_samples = order(batch.epoch);
  const std::int64_t begin = rank_begin(batch);
  std::vector<std::int64_t> samples(static_cast<std::size_t>(batch_size_));
  for (std::int64_t i = 0; i < batch_size_; ++i) samples[i] = (*epoch_samples)[begin + i];
  return samples;
}

}  // namespace pfc
