// Inter-class filtering of PartialFC's negatives. CPU reference:
// src/backend/cpu/cpu_partial_fc_ops.cpp (interclass_filter, interclass_filter_backward), after
// arcface_torch's CombinedMarginLoss: a negative whose cosine exceeds the threshold is set to 0
// before the margin, and, being a constant from then on, gets no gradient. One thread per
// element; the row of an element comes from its grid row, so no division is needed.
#include <algorithm>

#include "backend/cuda/interclass_filter_kernels.h"
#include "backend/cuda/kernel_common.cuh"

namespace pfc::cuda {

namespace {

constexpr int kBlock = 256;

template <class T>
__global__ void filter_kernel(T* cos, std::int64_t classes, const std::int64_t* label,
                              double threshold, std::uint8_t* keep, int* error_flag, int code) {
  const std::int64_t b = blockIdx.y;
  const std::int64_t target = label[b];
  if (blockIdx.x == 0 && threadIdx.x == 0 && (target < -1 || target >= classes))
    atomicCAS(error_flag, 0, code);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       j < classes; j += stride) {
    const std::int64_t i = b * classes + j;
    // Compared in f64, as the CPU does, so that the two agree at the threshold itself.
    const bool filtered = j != target && static_cast<double>(to_float(cos[i])) > threshold;
    keep[i] = filtered ? 0 : 1;
    if (filtered) cos[i] = from_float<T>(0.0f);
  }
}

template <class T>
__global__ void filter_backward_kernel(T* grad, std::int64_t n, const std::uint8_t* keep) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    if (keep[i] == 0) grad[i] = from_float<T>(0.0f);
}

}  // namespace

void launch_interclass_filter(void* cos, DType dtype, std::int64_t batch, std::int64_t classes,
                              const std::int64_t* label, double threshold, std::uint8_t* keep,
                              int* error_flag, int code, cudaStream_t stream) {
  if (batch == 0 || classes == 0) return;
  dispatch_float(dtype, "interclass_filter", [&](auto tag) {
    using T = decltype(tag);
    // The blocks that fill the device a few times over, shared out among the rows (the
    // grid's y), never more per row than its columns need.
    const std::int64_t per_row =
        std::max<std::int64_t>(1, grid_size(batch * classes, kBlock) / batch);
    const auto column_blocks =
        static_cast<unsigned>(std::min<std::int64_t>(per_row, ceil_div(classes, kBlock)));
    filter_kernel<T><<<dim3(column_blocks, static_cast<unsigned>(batch)), kBlock, 0, stream>>>(
        static_cast<T*>(cos), classes, label, threshold, keep, error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

void launch_interclass_filter_backward(void* grad, DType dtype, std::int64_t n,
                                       const std::uint8_t* keep, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(dtype, "interclass_filter_backward", [&](auto tag) {
    using T = decltype(tag);
    filter_backward_kernel<T><<<grid_size(n, kBlock), kBlock, 0, stream>>>(static_cast<T*>(grad),
                                                                           n, keep);
    PFC_CHECK_LAUNCH();
  });
}

}  // namespace pfc::cuda
