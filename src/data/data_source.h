// Where training batches come from: synthetic data (the benchmark) or a RecordIO dataset.
// A batch is this rank's share of one step, on the host, NHWC, normalised to
// (pixel/255 - 0.5)/0.5, ready to be copied to the backend's device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace pfc {

struct Batch {
  Tensor images;  // f32 [batch, image_size, image_size, 3], host
  Tensor labels;  // i64 [batch], host, each in [0, num_classes)
};

// Where a data source is in its stream, so that a resumed run continues exactly.
struct DataPosition {
  std::int64_t epoch = 0;
  std::int64_t batch_in_epoch = 0;  // batches of this rank already delivered in `epoch`
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Fills `out` with the next batch (the tensors are allocated by the source and reused).
  virtual void next(Batch& out) = 0;
  virtual DataPosition position() const = 0;
  // Continue from a saved position (the world size may differ from the one that saved it;
  // then the position is in global samples, see DataPosition's users).
  virtual void seek(const DataPosition& position) = 0;
  virtual std::int64_t batches_per_epoch() const = 0;
  // Samples skipped because a record was damaged, so far (RecordIO only).
  virtual std::int64_t skipped_records() const { return 0; }
};

}  // namespace pfc
