// The benchmark's data (arcface_torch's SyntheticDataLoader): one random image, built once
// from the counter RNG as integer pixels in [0, 255) then normalised, repeated for every
// sample. Labels are 1 for every sample ("constant", as the benchmark), or spread over all
// classes ("uniform": counter RNG of (seed, global sample index) mod num_classes) so every
// classifier shard sees positives. Positions follow the DistributedSampler's schedule, so
// resuming and changing the number of ranks behave as with a real dataset. From a meta batch
// allocator (a plan's), the images have no pixels and only the labels are computed.
#pragma once

#include <cstdint>

#include "core/allocator.h"
#include "data/data_source.h"
#include "data/distributed_sampler.h"

namespace pfc {

enum class SyntheticLabels { constant, uniform };

struct SyntheticSourceOptions {
  std::int64_t batch_size = 128;
  std::int64_t image_size = 112;
  std::int64_t num_classes = 0;
  std::int64_t num_image = 1000000;  // samples per epoch
  std::uint64_t seed = 0;
  SyntheticLabels labels = SyntheticLabels::constant;
};

class SyntheticDataSource final : public DataSource {
 public:
  SyntheticDataSource(const SyntheticSourceOptions& options, int rank, int world_size,
                      Allocator& batch_allocator);

  void next(Batch& out) override;
  DataPosition position() const override { return position_; }
  void seek(const DataPosition& position) override;
  std::int64_t batches_per_epoch() const override { return sampler_.batches_per_epoch(); }
  bool constant_images() const override { return true; }

  // The label of sample `index` of `epoch` (a pure function, for tests and other ranks).
  std::int64_t label(std::int64_t epoch, std::int64_t index) const;

 private:
  SyntheticSourceOptions options_;
  DistributedSampler sampler_;
  Tensor images_;  // filled once: every sample is the same image
  Tensor labels_;
  DataPosition position_;
};

}  // namespace pfc
