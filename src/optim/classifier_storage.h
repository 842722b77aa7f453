// classifier_storage = "f32" | "f16" | "bf16": the type PartialFC's class centres and their
// optimiser moments are kept in. 16 bits halve the two largest allocations of a large
// classifier; the sampled rows are read into the compute type, the arithmetic is unchanged,
// and each update rounds its results back stochastically (backend.h, StochasticRounding), so
// that updates far below a 16-bit spacing still move the centres on average.
#pragma once

#include <string_view>

#include "core/dtype.h"
#include "optim/optimizer.h"

namespace pfc {

// "f32" | "f16" | "bf16" as a DType; throws pfc::UsageError naming the value otherwise.
DType parse_classifier_storage(std::string_view name);

// The centres' type: `compute` (f32, or f64 in an f64 run) for f32 storage, else the 16-bit
// type.
DType stored_weight_type(DType storage, DType compute);

// The type of the centres' optimiser moments beside weights of `weight` type: the same, but
// bf16 for AdamW beside f16 centres. AdamW divides by the square root of its second moment,
// g^2 (1e-10 and below for a class centre's gradient), far under f16's smallest value
// (6e-8): in f16 it would be 0 and the step m / eps; bf16 has f32's range.
DType stored_moment_type(DType weight, OptimizerKind kind);

}  // namespace pfc
