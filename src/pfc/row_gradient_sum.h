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

// What index_on_backend allocates for n values, holding none: the meta backend's (a plan's
// index has a size only, so it needs no host vector of the shard's size).
Tensor planned_index_on_backend(Backend& backend, std::int64_t n, MemoryPurpose purpose);

// a + b over the sorted union of their rows: a row in both gets the sum, a row in one keeps
// its gradient. The rows are added in a's then b's order, as autograd accumulates.
RowGradient sum_row_gradients(Backend& backend, const RowGradient& a, const RowGradient& b);

// The same on the meta backend, where a and b have rows but no index (a plan draws no
// classes): the tensors sum_row_gradients allocates, in its order, for a union of as many rows
// as a and b have together, at most the shard's `shard_rows`. The run's union is smaller
// where its draws overlap, so the plan is an upper bound of every step's.
RowGradient planned_row_gradient_sum(Backend& backend, const RowGradient& a, const RowGradient& b,
                                     std::int64_t shard_rows);

}  // namespace pfc
