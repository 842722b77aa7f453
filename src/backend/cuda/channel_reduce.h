// The launch shape of the per-channel (column) reductions over x [rows, channels] that
// batch-norm, PReLU and sum_rows use: blocks of 32 channels x 8 rows, `row_blocks` of them
// down the rows, each writing K partial sums per channel to an f32 scratch buffer
// [row_blocks, K, channels] that a second kernel folds (in f64) into the final values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pfc::cuda {

struct ChannelReduceShape {
  std::int64_t rows = 0, channels = 0;
  int channel_blocks = 0;  // ceil(channels / 32)
  int row_blocks = 0;

  // Scratch bytes for K partial sums per channel and row block.
  std::size_t scratch_bytes(int k) const {
    return static_cast<std::size_t>(row_blocks) * k * channels * sizeof(float);
  }
};

ChannelReduceShape channel_reduce_shape(std::int64_t rows, std::int64_t channels);

}  // namespace pfc::cuda
