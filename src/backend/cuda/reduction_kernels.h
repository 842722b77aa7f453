// Launchers for the whole-tensor and per-column reductions (reduction_kernels.cu):
// sum_of_squares, all_finite and sum_rows. Results stay on the device; CudaBackend copies
// the scalar ones back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

// *result (f64, device) = sum of x[i]^2: f32 sums per block, folded in f64. `scratch` holds
// sum_of_squares_scratch_bytes(n) bytes; result may point into it.
std::size_t sum_of_squares_scratch_bytes(std::int64_t n);
void launch_sum_of_squares(const void* x, DType dtype, std::int64_t n, void* scratch,
                           double* result, cudaStream_t stream);

// *found_nonfinite (device int) = 1 when any element is inf or NaN, else 0.
void launch_find_nonfinite(const void* x, DType dtype, std::int64_t n, int* found_nonfinite,
                           cudaStream_t stream);

// out [cols] = sum over rows of x [rows, cols]; x and out each f16 or f32; sums in f32/f64.
std::size_t sum_rows_scratch_bytes(std::int64_t rows, std::int64_t cols);
void launch_sum_rows(const void* x, DType x_dtype, std::int64_t rows, std::int64_t cols, void* out,
                     DType out_dtype, void* scratch, cudaStream_t stream);

}  // namespace pfc::cuda
