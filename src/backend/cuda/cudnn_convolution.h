// cuDNN convolutions for the CUDA backend: NHWC activations, OHWI filters (cuDNN's NHWC
// filter format, [out, kh, kw, in / groups] with cuDNN's group count), no bias. One plan per
// (geometry, dtype): descriptors plus, per direction, the algorithm cudnnFind*Ex measured
// fastest and its workspace size, found at first use and cached. All plans share one
// workspace, sized by workspace_policy.h. f16 runs on tensor cores with f32 accumulation; f32
// is restricted to FMA math (no TF32), so fp32 runs agree with the CPU backend to f32 rounding.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>

#include "backend/backend.h"
#include "backend/cuda/cuda_handles.h"
#include "backend/cuda/device_arena.h"
#include "core/tensor.h"

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
  // Bytes of the workspace every plan shares (counted in the arena's ledger as `workspace`).
  std::size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  struct Plan;
  template <class Algo>
  struct Choice;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;
  Plan& plan(const Conv2dGeometry& g, DType dtype);
  // One direction's algorithm for plan p (conv_algorithm_choice.h): measured by
  // `find(workspace, bytes, results, capacity, &count)` (a cudnnFind*Ex), else from
  // `heuristics(results, capacity, &count)`; the shared workspace is resized around it as
  // workspace_policy.h says. Throws pfc::Error listing each refused algorithm and why.
  template <class Perf, int kCapacity, class Find, class Heuristics>
  Choice<decltype(Perf::algo)> choose(const Plan& p, cudnnConvolutionDescriptor_t conv,
                                      const char* direction, Find&& find,
                                      Heuristics&& heuristics);
  // Replaces the shared workspace by one of `bytes`; false, with the old size kept, when the
  // arena cannot give it.
  bool resize_workspace(std::size_t bytes);

  cudnnHandle_t handle_;
  DeviceArena& arena_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  Tensor workspace_;
  std::size_t largest_chosen_ = 0;  // the largest workspace any plan's algorithm needs
};

}  // namespace pfc::cuda
