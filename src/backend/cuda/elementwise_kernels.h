// Launchers for the elementwise kernels (elementwise_kernels.cu): fill, fill_normal, cast,
// add, axpy, scale and add_row_vector on raw device pointers, queued on `stream`. Shapes and
// dtypes are checked by CudaBackend before these are called.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

// Any element type; value converted as a static_cast (f16, bf16: round to nearest even).
void launch_fill(void* x, DType dtype, std::int64_t n, double value, cudaStream_t stream);
// x[i] = normal_value(key, first_index + i, stddev) (core/counter_rng.h); x f32, or f16 or
// bf16 rounded to nearest even.
void launch_fill_normal(void* x, DType dtype, std::int64_t n, std::uint64_t key,
                        std::uint64_t first_index, double stddev, cudaStream_t stream);
// Between f16, bf16, f32 and f64 (f64 -> f16 or bf16 goes through f32, as the CPU backend
// does).
void launch_cast(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::int64_t n,
                 cudaStream_t stream);
// y = a + b, one floating dtype (f16 or f32) for all three; sums in f32.
void launch_add(const void* a, const void* b, void* y, DType dtype, std::int64_t n,
                cudaStream_t stream);
// y += alpha * x; x and y each f16 or f32.
void launch_axpy(double alpha, const void* x, DType x_dtype, void* y, DType y_dtype, std::int64_t n,
                 cudaStream_t stream);
// x *= alpha; f16 or f32.
void launch_scale(void* x, DType dtype, std::int64_t n, double alpha, cudaStream_t stream);
// x [rows, cols] += bias [cols] on every row; x and bias each f16 or f32.
void launch_add_row_vector(void* x, DType x_dtype, std::int64_t rows, std::int64_t cols,
                           const void* bias, DType bias_dtype, cudaStream_t stream);

}  // namespace pfc::cuda
