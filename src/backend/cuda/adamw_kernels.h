// Launchers for the AdamW updates (adamw_kernels.cu), torch.optim.AdamW on f32 master weights
// and moments; gradients f16 or f32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

// One update's constants, the bias corrections already folded in (host-side, in f64).
struct AdamWConstants {
  double decay = 1.0;       // 1 - lr * weight_decay
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double step_size = 1e-3;  // lr / (1 - beta1^t)
  double bias2_sqrt = 1.0;  // sqrt(1 - beta2^t)
};

// w *= decay; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// w -= step_size * m / (sqrt(v) / bias2_sqrt + eps), over n elements.
void launch_adamw_update(float* w, const void* g, DType g_dtype, float* m, float* v,
                         std::int64_t n, const AdamWConstants& c, cudaStream_t stream);

// The same on rows index[i] of w, m and v [table_rows, cols] with gradient row i of g
// [count, cols]. An index outside the table records `code` in *error_flag.
void launch_adamw_update_rows(float* w, float* m, float* v, std::int64_t table_rows,
                              std::int64_t cols, const std::int64_t* index, const void* g,
                              DType g_dtype, std::int64_t count, const AdamWConstants& c,
                              int* error_flag, int code, cudaStream_t stream);

// The whole of w, m and v [table_rows, cols] with a sparse gradient: row i of g [count, cols]
// at row index[i] (sorted, unique), zero elsewhere. An index outside the table, unsorted or
// repeated, records `code` in *error_flag.
void launch_adamw_update_sparse_grad(float* w, float* m, float* v, std::int64_t table_rows,
                                     std::int64_t cols, const std::int64_t* index, const void* g,
                                     DType g_dtype, std::int64_t count, const AdamWConstants& c,
                                     int* error_flag, int code, cudaStream_t stream);

}  // namespace pfc::cuda
