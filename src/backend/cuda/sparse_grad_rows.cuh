// The row walk of the optimiser updates whose gradient is sparse (sgd_update_sparse_grad,
// adamw_update_sparse_grad): every row of the table is updated, and row r's gradient is row
// `pos` of g when index[pos] == r, else zero. Each block takes a contiguous share of the
// table's rows and finds its first gradient row by one binary search in the sorted index; from
// there a cursor advances one row at a time, so a row costs one cached read of the index, not a
// search (millions of rows per step). Every thread of the block walks the same cursor, so the
// block needs no synchronisation. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernel_common.cuh"

namespace pfc::cuda {

// Blocks of the sparse-gradient updates' kernels: enough to fill the device, each a share of
// at least one row.
inline int sparse_grad_grid(std::int64_t table_rows, int block) {
  return grid_size(table_rows * block, block);
}

// Calls row_op(row, pos) for each row of this block's share, pos the row's place in index or
// -1. Also checks index (sorted, unique, inside the table) and records `code` in *error_flag
// when it is not; the walk then stays in bounds but its result is void.
template <class RowOp>
__device__ void for_each_table_row(std::int64_t table_rows, const std::int64_t* index,
                                   std::int64_t count, int* error_flag, int code,
                                   const RowOp& row_op) {
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += threads) {
    const bool inside = index[i] >= 0 && index[i] < table_rows;
    if (!inside || (i > 0 && index[i - 1] >= index[i])) atomicCAS(error_flag, 0, code);
  }
  const std::int64_t share = (table_rows + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * share;
  const std::int64_t end = begin + share < table_rows ? begin + share : table_rows;
  // The first entry of index at or after `begin`.
  std::int64_t lo = 0, hi = count;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (index[mid] < begin) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  std::int64_t cursor = lo;
  for (std::int64_t row = begin; row < end; ++row) {
    const bool has_grad = cursor < count && index[cursor] == row;
    row_op(row, has_grad ? cursor : -1);
    if (has_grad) ++cursor;
  }
}

}  // namespace pfc::cuda
