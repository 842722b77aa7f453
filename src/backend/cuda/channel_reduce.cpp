#include "backend/cuda/channel_reduce.h"

#include <algorithm>

#include "backend/cuda/launch_shape.h"

namespace pfc::cuda {

ChannelReduceShape channel_reduce_shape(std::int64_t rows, std::int64_t channels) {
  constexpr std::int64_t kMaxRowBlocks = 1024;
  ChannelReduceShape s;
  s.rows = rows;
  s.channels = channels;
  s.channel_blocks = static_cast<int>(std::max<std::int64_t>(1, ceil_div(channels, 32)));
  // About four blocks per SM in all, each thread summing at least a few rows.
  const std::int64_t wanted = ceil_div(4LL * device_sm_count(), s.channel_blocks);
  const std::int64_t most =
      std::max<std::int64_t>(1, std::min(ceil_div(rows, 8 * 4), kMaxRowBlocks));
  s.row_blocks = static_cast<int>(std::clamp<std::int64_t>(wanted, 1, most));
  return s;
}

}  // namespace pfc::cuda
