// Where training batches come from: synthetic data (the benchmark) or a RecordIO dataset.
// A batch is this rank's share of one step, on the host, NHWC, normalised to
// (pixel/255 - 0.5)/0.5, ready to be copied to the backend's device.
#pragma once

#include <cstdint>
#include <memory>

#include "core/allocator.h"
#include "core/tensor.h"

namespace pfc {

struct Config;

struct Batch {
  Tensor images;  // f32 [batch, image_size, image_size, 3], host, RGB
  Tensor labels;  // i64 [batch], host, each in [0, num_classes)
};

// Where the whole job is in its stream of samples. It counts global samples (all ranks
// together), not batches of one rank, so a run resumed on a different number of ranks
// continues at the same place in the epoch's order.
struct DataPosition {
  std::int64_t epoch = 0;
  std::int64_t samples_in_epoch = 0;  // global samples already delivered in `epoch`

  friend bool operator==(const DataPosition&, const DataPosition&) = default;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Fills `out` with the next batch. The tensors belong to the source and stay valid until
  // the following call of next() or seek().
  virtual void next(Batch& out) = 0;
  // The position after the last batch next() returned: what a checkpoint saves.
  virtual DataPosition position() const = 0;
  // Continues from a saved position, which may come from a run with another world size.
  virtual void seek(const DataPosition& position) = 0;
  // Global batches in a full epoch (the tail that does not fill one is dropped).
  virtual std::int64_t batches_per_epoch() const = 0;
  // Distinct damaged records met so far (RecordIO only); each was replaced by a good one.
  virtual std::int64_t skipped_records() const { return 0; }
  // Every batch holds the same images (synthetic data): a consumer may copy them to the
  // device once, as arcface_torch's SyntheticDataLoader keeps its one batch on the GPU.
  virtual bool constant_images() const { return false; }
};

// cfg.rec = "synthetic" or a folder holding train.rec and train.idx. Batch buffers come from
// `batch_allocator` (a backend may pass pinned host memory). Throws UsageError when the
// config does not fit the dataset and Error when the dataset's files do not fit each other.
std::unique_ptr<DataSource> make_data_source(const Config& cfg, int rank, int world_size,
                                             Allocator& batch_allocator = host_allocator());

}  // namespace pfc
