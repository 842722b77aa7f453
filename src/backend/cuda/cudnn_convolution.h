// cuDNN convolutions for the CUDA backend: NHWC activations, OHWI filters (cuDNN's NHWC
// filter format), no bias. One plan per (geometry, dtype): descriptors plus, per direction,
// the algorithm cudnnFind*Ex measured fastest and its workspace size, found at first use and
// cached. f16 runs on tensor cores with f32 accumulation; f32 is restricted to FMA math (no
// TF32), so fp32 runs agree with the CPU backend to f32 rounding.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>

#include "backend/backend.h"
#include "backend/cuda/cuda_handles.h"
#include "backend/cuda/device_arena.h"

namespace pfc::cuda {

class CudnnConvolution {
 public:
  // `handle` is already bound to the backend's stream; workspaces come from `arena`.
  CudnnConvolution(cudnnHandle_t handle, DeviceArena& arena);
  ~CudnnConvolution();
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;

  void forward(const Conv2dGeometry& g, DType dtype, const void* x, const void* w, void* y);
  void backward_data(const Conv2dGeometry& g, DType dtype, const void* dy, const void* w, void* dx);
  void backward_filter(const Conv2dGeometry& g, DType dtype, const void* x, const void* dy,
                       void* dw);

  // Plans built so far (one per distinct geometry and dtype).
  std::size_t plan_count() const { return plans_.size(); }

 private:
  struct Plan;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, int>;
  Plan& plan(const Conv2dGeometry& g, DType dtype);
  // Bytes a cudnnFind*Ex may use for trying algorithms.
  std::size_t find_workspace_limit() const;

  cudnnHandle_t handle_;
  DeviceArena& arena_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace pfc::cuda
