// Launchers for batch-norm (training and inference mode) and PReLU over x [rows, channels]
// (batchnorm_kernels.cu, prelu_kernels.cu). Activations f16 or f32 (x, y, dy, dx share one
// dtype); parameters, statistics and parameter gradients f32. `scratch` is device memory of
// at least the *_scratch_bytes the matching function returns.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

struct BatchNormForwardArgs {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, channels = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* running_mean = nullptr;
  float* running_var = nullptr;
  float* saved_mean = nullptr;
  float* saved_invstd = nullptr;
  double momentum = 0.1, eps = 1e-5;
};

std::size_t batchnorm_forward_scratch_bytes(std::int64_t rows, std::int64_t channels);
void launch_batchnorm_forward_train(const BatchNormForwardArgs& a, void* scratch,
                                    cudaStream_t stream);

struct BatchNormInferenceArgs {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, channels = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  const float* running_mean = nullptr;
  const float* running_var = nullptr;
  double eps = 1e-5;
};

// y = (x - saved_mean) * saved_invstd * gamma + beta: the training forward's normalisation
// again, from its saved statistics.
struct BatchNormSavedArgs {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, channels = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  const float* saved_mean = nullptr;
  const float* saved_invstd = nullptr;
};

void launch_batchnorm_forward_saved(const BatchNormSavedArgs& a, cudaStream_t stream);

std::size_t batchnorm_inference_scratch_bytes(std::int64_t channels);
void launch_batchnorm_forward_inference(const BatchNormInferenceArgs& a, void* scratch,
                                        cudaStream_t stream);

struct BatchNormBackwardArgs {
  const void* dy = nullptr;
  const void* x = nullptr;
  void* dx = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, channels = 0;
  const float* gamma = nullptr;
  const float* saved_mean = nullptr;
  const float* saved_invstd = nullptr;
  float* dgamma = nullptr;
  float* dbeta = nullptr;
};

std::size_t batchnorm_backward_scratch_bytes(std::int64_t rows, std::int64_t channels);
void launch_batchnorm_backward(const BatchNormBackwardArgs& a, void* scratch, cudaStream_t stream);

void launch_prelu_forward(const void* x, void* y, DType dtype, std::int64_t rows,
                          std::int64_t channels, const float* slope, cudaStream_t stream);

std::size_t prelu_backward_scratch_bytes(std::int64_t rows, std::int64_t channels);
// dx = x > 0 ? dy : slope * dy;  dslope[c] = sum over rows of (x > 0 ? 0 : x * dy), one pass.
void launch_prelu_backward(const void* dy, const void* x, void* dx, DType dtype, std::int64_t rows,
                           std::int64_t channels, const float* slope, float* dslope, void* scratch,
                           cudaStream_t stream);

}  // namespace pfc::cuda
