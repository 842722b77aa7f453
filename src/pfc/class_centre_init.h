// The class centres' initial values, N(0, 0.01) as arcface_torch draws them, from the counter
// RNG keyed by the element's index in the GLOBAL [num_classes, emb] matrix: every world size
// and every shard split starts from the same matrix.
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace pfc {

constexpr double kClassCentreInitStd = 0.01;

// Element `index` (row * emb + col) of the global matrix: Box-Muller on counter pair index / 2,
// its cosine half for even indices and its sine half for odd ones.
float class_centre_init_value(std::uint64_t seed, std::uint64_t index,
                              double stddev = kClassCentreInitStd);

// Fills rows [num_rows, emb] (any device; f32, or f64 holding the same f32 values, or f16 or
// bf16 holding them rounded to nearest) with global rows first_row .. first_row + num_rows.
void init_class_centres(Backend& backend, Tensor& rows, std::int64_t first_row,
                        std::uint64_t seed, double stddev = kClassCentreInitStd);

}  // namespace pfc
