#include "backend/cuda/launch_shape.h"

#include <algorithm>

#include "backend/cuda/cuda_check.h"

namespace pfc::cuda {

int device_sm_count() {
  // One device per process (see CudaBackend), so the first answer holds.
  static const int count = [] {
    int device = 0, sms = 0;
    PFC_CHECK_CUDA(cudaGetDevice(&device));
    PFC_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

int grid_size(std::int64_t work_items, int block, int blocks_per_sm) {
  const std::int64_t needed = std::max<std::int64_t>(1, ceil_div(work_items, block));
  const std::int64_t most = static_cast<std::int64_t>(device_sm_count()) * blocks_per_sm;
  return static_cast<int>(std::min(needed, most));
}

}  // namespace pfc::cuda
