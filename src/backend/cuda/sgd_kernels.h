// Launchers for the SGD updates (sgd_kernels.cu), PyTorch semantics: f32 master weights and
// momentum, or stored 16-bit weights and momentum (f16 or bf16 each, class centres) read into
// f32 and rounded back stochastically; gradients f16 or f32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

struct SgdConstants {
  double lr = 0.1, momentum = 0.9, weight_decay = 5e-4;
};

// Where 16-bit results round: the update's key, and the global row of row 0 of w
// (backend.h, StochasticRounding). Unused for f32 weights.
struct SgdRounding {
  std::uint64_t key = 0;
  std::int64_t first_row = 0;
};

// g' = g + wd * w;  m = momentum * m + g';  w -= lr * m, over w [rows, cols] (any shape for
// f32 weights: rows * cols = n).
void launch_sgd_update(void* w, DType w_dtype, const void* g, DType g_dtype, void* m,
                       DType m_dtype, std::int64_t n, std::int64_t cols, const SgdConstants& c,
                       const SgdRounding& rounding, cudaStream_t stream);

// The same on rows index[i] of w and m [table_rows, cols] with gradient row i of g
// [count, cols]. An index outside the table records `code` in *error_flag.
void launch_sgd_update_rows(void* w, DType w_dtype, void* m, DType m_dtype,
                            std::int64_t table_rows, std::int64_t cols, const std::int64_t* index,
                            const void* g, DType g_dtype, std::int64_t count,
                            const SgdConstants& c, const SgdRounding& rounding, int* error_flag,
                            int code, cudaStream_t stream);

// The whole of w and m [table_rows, cols] with a sparse gradient: row i of g [count, cols] at
// row index[i] (sorted, unique), zero elsewhere. An index outside the table, unsorted or
// repeated, records `code` in *error_flag.
void launch_sgd_update_sparse_grad(void* w, DType w_dtype, void* m, DType m_dtype,
                                   std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const void* g, DType g_dtype,
                                   std::int64_t count, const SgdConstants& c,
                                   const SgdRounding& rounding, int* error_flag, int code,
                                   cudaStream_t stream);

}  // namespace pfc::cuda
