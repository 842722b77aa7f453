// Launchers for arcface_torch's inter-class filtering (interclass_filter_kernels.cu) on the
// cosines [batch, classes] of this rank's shard (f16 or f32), with a u8 keep mask beside them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

// In place: cos[b, j] := 0 where cos > threshold and j != label[b] (-1: no target in this
// shard); keep[b, j] = 0 there, 1 elsewhere. A label outside [-1, classes) records `code` in
// *error_flag.
void launch_interclass_filter(void* cos, DType dtype, std::int64_t batch, std::int64_t classes,
                              const std::int64_t* label, double threshold, std::uint8_t* keep,
                              int* error_flag, int code, cudaStream_t stream);

// grad *= keep over n elements (grad f16 or f32).
void launch_interclass_filter_backward(void* grad, DType dtype, std::int64_t n,
                                       const std::uint8_t* keep, cudaStream_t stream);

}  // namespace pfc::cuda
