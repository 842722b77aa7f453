// Launchers for the SGD updates (sgd_kernels.cu), PyTorch semantics on f32 master weights
// and momentum; gradients f16 or f32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

struct SgdConstants {
  double lr = 0.1, momentum = 0.9, weight_decay = 5e-4;
};

// g' = g + wd * w;  m = momentum * m + g';  w -= lr * m, over n elements.
void launch_sgd_update(float* w, const void* g, DType g_dtype, float* m, std::int64_t n,
                       const SgdConstants& c, cudaStream_t stream);

// The same on rows index[i] of w and m [table_rows, cols] with gradient row i of g
// [count, cols]. An index outside the table records `code` in *error_flag.
void launch_sgd_update_rows(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                            const std::int64_t* index, const void* g, DType g_dtype,
                            std::int64_t count, const SgdConstants& c, int* error_flag, int code,
                            cudaStream_t stream);

// The whole of w and m [table_rows, cols] with a sparse gradient: row i of g [count, cols] at
// row index[i] (sorted, unique), zero elsewhere. An index outside the table, unsorted or
// repeated, records `code` in *error_flag.
void launch_sgd_update_sparse_grad(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const void* g, DType g_dtype,
                                   std::int64_t count, const SgdConstants& c, int* error_flag,
                                   int code, cudaStream_t stream);

}  // namespace pfc::cuda
