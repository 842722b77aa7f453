// Training batches from an insightface RecordIO dataset: the DistributedSampler picks each
// rank's samples, a pool of threads reads and decodes them into a ring of batch buffers.
// A damaged sample (unreadable record, bad image, label out of range) is replaced by the next
// good one in the epoch's order, so batches stay full and the stream stays a pure function
// of (seed, position); it is counted and logged once, naming its key. Damage is an exception,
// not a dataset: past damaged_records_tolerated() the run stops with a message, and a dataset
// whose records probed at start-up are all damaged is refused before training.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "data/batch_pipeline.h"
#include "data/data_source.h"
#include "data/distributed_sampler.h"
#include "data/face_image_decoder.h"
#include "data/record_dataset.h"

namespace pfc {

// A run skips at most 1 damaged record in kDamagedRecordsShare of the images, or
// kDamagedRecordsFloor in a small dataset (counted on each rank).
inline constexpr std::int64_t kDamagedRecordsShare = 100;
inline constexpr std::int64_t kDamagedRecordsFloor = 16;
std::int64_t damaged_records_tolerated(std::int64_t images);

struct RecordIOSourceOptions {
  std::int64_t batch_size = 128;
  std::int64_t image_size = 112;
  std::int64_t num_classes = 0;  // labels outside [0, num_classes) are damage
  std::uint64_t seed = 0;
  int workers = 4;
};

class RecordIODataSource final : public DataSource {
 public:
  RecordIODataSource(std::unique_ptr<RecordDataset> dataset, const RecordIOSourceOptions& options,
                     int rank, int world_size, Allocator& batch_allocator);
  ~RecordIODataSource() override;

  void next(Batch& out) override;
  DataPosition position() const override;
  void seek(const DataPosition& position) override;
  std::int64_t batches_per_epoch() const override { return sampler_.batches_per_epoch(); }
  std::int64_t skipped_records() const override { return skipped_.load(); }

  // Whether sample `sample` is flipped left-right in `epoch` (a pure function, for tests).
  bool flipped(std::int64_t epoch, std::int64_t sample) const;

 private:
  struct Worker {
    explicit Worker(std::int64_t image_size) : decoder(image_size) {}
    FaceImageDecoder decoder;
    std::vector<std::uint8_t> payload;
  };

  // Throws UsageError when the dataset's images are not image_size x image_size (otherwise
  // every record would be skipped as damaged, one warning at a time), and Error when every
  // record probed is damaged.
  void check_records() const;
  void fill(std::int64_t k, Batch& batch, Worker& worker);
  // Decodes `sample` into `image`; false (and the record marked damaged) when it is damaged.
  // Throws Error when the damage passes what a run tolerates.
  bool load(std::int64_t epoch, std::int64_t sample, float* image, std::int64_t& label,
            Worker& worker);
  void mark_damaged(std::int64_t sample, const std::string& why);

  std::unique_ptr<RecordDataset> dataset_;
  RecordIOSourceOptions options_;
  DistributedSampler sampler_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> damaged_;
  std::atomic<std::int64_t> skipped_{0};
  DataPosition start_;
  // Last: its threads use everything above, so it must stop before the rest is destroyed.
  std::unique_ptr<BatchPipeline> pipeline_;
};

}  // namespace pfc
