// Launchers for the row-wise kernels (rows_kernels.cu): L2 normalisation of rows and its
// backward, and gathering / scattering rows by an i64 index. An index outside the table
// does not touch memory: it records `code` in *error_flag, which CudaBackend reports at the
// next synchronize().
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

// y = x / max(||x||, 1e-12) per row of [rows, cols]; norms[r] = ||x_r|| (f32). x f16, bf16 or
// f32; y f16 or f32.
void launch_l2_normalize_rows(const void* x, DType x_dtype, void* y, DType y_dtype, float* norms,
                              std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// dx = (dy - y * <y, dy>) / ||x|| per row (dy / 1e-12 where ||x|| <= 1e-12, where the
// clamp is constant); dy, y and dx each f16 or f32; dx may be dy.
void launch_l2_normalize_rows_backward(const void* dy, DType dy_dtype, const void* y, DType y_dtype,
                                       const float* norms, void* dx, DType dx_dtype,
                                       std::int64_t rows, std::int64_t cols, cudaStream_t stream);

// dst[i, :] = src[index[i], :] for i < count; rows of row_bytes bytes; src has src_rows rows.
void launch_gather_rows(const void* src, std::int64_t src_rows, const std::int64_t* index,
                        std::int64_t count, void* dst, std::int64_t row_bytes, int* error_flag,
                        int code, cudaStream_t stream);
// dst[index[i], :] = src[i, :] for i < count; dst has dst_rows rows.
void launch_scatter_rows(const void* src, const std::int64_t* index, std::int64_t count, void* dst,
                         std::int64_t dst_rows, std::int64_t row_bytes, int* error_flag, int code,
                         cudaStream_t stream);

}  // namespace pfc::cuda
