// Launch shapes for grid-stride kernels: enough blocks to fill the device a few times over,
// never more than the work needs. Host code; shared by the kernel files.
#pragma once

#include <cstdint>

namespace pfc::cuda {

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Streaming multiprocessors of the current device (read once per process).
int device_sm_count();

// Blocks for `work_items` items of `block` threads each: at most `blocks_per_sm` per SM.
int grid_size(std::int64_t work_items, int block, int blocks_per_sm = 8);

// True when p is aligned to `bytes`.
inline bool is_aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace pfc::cuda
