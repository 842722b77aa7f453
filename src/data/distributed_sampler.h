// Which samples each rank reads, step after step, as a pure function of (seed, epoch,
// position). Every epoch has its own order, a permutation of [0, num_samples) drawn from
// (seed, epoch) with the counter RNG. A global batch is batch_size * world_size consecutive
// entries of that order, and rank r takes entries [r * batch_size, (r + 1) * batch_size) of
// it; the tail of an epoch too short for a whole global batch is dropped. Because positions
// count global samples, a run resumed on another number of ranks (same global batch) reads
// exactly the samples the old run would have read next.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "data/data_source.h"

namespace pfc {

// One global batch: entries [offset, offset + global batch) of epoch `epoch`'s order.
struct GlobalBatch {
  std::int64_t epoch = 0;
  std::int64_t offset = 0;
};

// Fisher-Yates over [0, n) driven by the counter RNG stream (seed, "data_order", epoch).
std::vector<std::uint32_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

class DistributedSampler {
 public:
  DistributedSampler(std::int64_t num_samples, std::int64_t batch_size, int rank, int world_size,
                     std::uint64_t seed);

  std::int64_t num_samples() const { return num_samples_; }
  std::int64_t batch_size() const { return batch_size_; }
  std::int64_t global_batch() const { return batch_size_ * world_size_; }
  std::int64_t batches_per_epoch() const { return num_samples_ / global_batch(); }

  // Throws Error when `position` cannot belong to this dataset.
  void check(const DataPosition& position) const;
  // The k-th global batch read from `from` (k = 0: the next one). A position too close to the
  // end of its epoch for a whole global batch continues at the start of the next epoch.
  GlobalBatch locate(const DataPosition& from, std::int64_t k) const;
  // The position once `batch` has been read.
  DataPosition after(const GlobalBatch& batch) const;
  // Where this rank's share of `batch` starts in the epoch's order.
  std::int64_t rank_begin(const GlobalBatch& batch) const {
    return batch.offset + rank_ * batch_size_;
  }
  // The epoch's order, shared by the threads that read it; the last two epochs are kept.
  std::shared_ptr<const std::vector<std::uint32_t>> order(std::int64_t epoch) const;
  // This rank's sample indices in `batch`.
  std::vector<std::int64_t> rank_samples(const GlobalBatch& batch) const;

 private:
  std::int64_t num_samples_;
  std::int64_t batch_size_;
  int rank_;
  int world_size_;
  std::uint64_t seed_;
  mutable std::mutex mutex_;
  mutable std::map<std::int64_t, std::shared_ptr<const std::vector<std::uint32_t>>> orders_;
};

}  // namespace pfc
