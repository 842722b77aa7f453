// Per-channel reductions over x [rows, channels] in two kernels (see channel_reduce.h):
// channel_partial_sums runs `op.accumulate(row, channel, acc)` over every element, summing
// K values per channel in f32 per thread and per block; channel_finalize folds the row
// blocks' partials in f64 and hands the K totals of each channel to `fin(channel, totals)`.
// Both passes are in a fixed order, so results are deterministic.
#pragma once

#include "backend/cuda/channel_reduce.h"
#include "backend/cuda/kernel_common.cuh"

namespace pfc::cuda {

constexpr int kChannelTile = 32;
constexpr int kRowTile = 8;

template <int K, class Op>
__global__ void channel_partial_sums(ChannelReduceShape shape, Op op, float* partial) {
  __shared__ float tile[K][kRowTile][kChannelTile];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kChannelTile + threadIdx.x;
  float acc[K];
#pragma unroll
  for (int k = 0; k < K; ++k) acc[k] = 0.0f;
  if (c < shape.channels) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * kRowTile;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * kRowTile + threadIdx.y;
         r < shape.rows; r += step)
      op.accumulate(r, c, acc);
  }
#pragma unroll
  for (int k = 0; k < K; ++k) tile[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && c < shape.channels) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float s = 0.0f;
#pragma unroll
      for (int y = 0; y < kRowTile; ++y) s += tile[k][y][threadIdx.x];
      partial[(static_cast<std::int64_t>(blockIdx.y) * K + k) * shape.channels + c] = s;
    }
  }
}

template <int K, class Fin>
__global__ void channel_finalize(ChannelReduceShape shape, const float* partial, Fin fin) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= shape.channels) return;
  double totals[K];
#pragma unroll
  for (int k = 0; k < K; ++k) totals[k] = 0.0;
  for (int b = 0; b < shape.row_blocks; ++b) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      totals[k] += partial[(static_cast<std::int64_t>(b) * K + k) * shape.channels + c];
  }
  fin(c, totals);
}

template <int K, class Op, class Fin>
void launch_channel_reduce(const ChannelReduceShape& shape, const Op& op, const Fin& fin,
                           float* scratch, cudaStream_t stream) {
  if (shape.channels == 0) return;
  const dim3 block(kChannelTile, kRowTile);
  const dim3 grid(shape.channel_blocks, shape.row_blocks);
  channel_partial_sums<K, Op><<<grid, block, 0, stream>>>(shape, op, scratch);
  PFC_CHECK_LAUNCH();
  constexpr int kFinalizeBlock = 128;
  const int blocks = static_cast<int>(ceil_div(shape.channels, kFinalizeBlock));
  channel_finalize<K, Fin><<<blocks, kFinalizeBlock, 0, stream>>>(shape, scratch, fin);
  PFC_CHECK_LAUNCH();
}

}  // namespace pfc::cuda
