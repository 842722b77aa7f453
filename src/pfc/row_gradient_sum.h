// The class-centre gradient of a step whose micro-batches (gradient_acc) each sampled their own
// rows: the sum over the union of the rows, so that the optimiser updates every row used in any
// of them, as arcface_torch's accumulated gradient does. Rows, not the whole shard, because a
// shard of millions of classes would need a gradient buffer of its own size.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"

namespace pfc {

// The gradient rows of some local classes of a shard.
struct RowGradient {
  std::vector<std::int64_t> index;  // sorted, unique local rows
  Tensor device_index;              // the same, i64 on the backend's device
  Tensor rows;                      // [index.size(), emb] on the backend's device
};

// i64 values on the backend's device.
Tensor index_on_backend(Backend& backend, const std::vector<std::int64_t>& values,
                        MemoryPurpose purpose);

// a + b over the sorted union of their rows: a row in both gets the sum, a row in one keeps
// its gradient. The rows are added in a's then b's order, as autograd accumulates.
RowGradient sum_row_gradients(Backend& backend, const RowGradient& a, const RowGradient& b);

}  // namespace pfc
