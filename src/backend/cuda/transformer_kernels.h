// Launchers for the Vision Transformer's kernels (transformer_kernels.cu): LayerNorm over the
// last dimension and its backward, the row softmax of attention and its backward, ReLU6 and
// DropPath's per-sample scaling. Activations f16 or f32 (the operands of one call share one
// type); LayerNorm's parameters, statistics and parameter gradients, and the per-sample
// factors, f32. CPU reference: src/backend/cpu/cpu_layernorm.cpp, cpu_softmax_rows.cpp,
// cpu_transformer_elementwise.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

struct LayerNormForwardArgs {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, width = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* saved_mean = nullptr;
  float* saved_invstd = nullptr;
  double eps = 1e-6;
};

void launch_layernorm_forward(const LayerNormForwardArgs& a, cudaStream_t stream);

struct LayerNormBackwardArgs {
  const void* dy = nullptr;
  const void* x = nullptr;
  void* dx = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, width = 0;
  const float* gamma = nullptr;
  const float* saved_mean = nullptr;
  const float* saved_invstd = nullptr;
  float* dgamma = nullptr;
  float* dbeta = nullptr;
};

std::size_t layernorm_backward_scratch_bytes(std::int64_t rows, std::int64_t width);
void launch_layernorm_backward(const LayerNormBackwardArgs& a, void* scratch, cudaStream_t stream);

// y = exp(x - row max) / row sum per row of [rows, width]; y may be x.
void launch_softmax_rows_forward(const void* x, void* y, DType dtype, std::int64_t rows,
                                 std::int64_t width, cudaStream_t stream);
// dx = y * (dy - <dy, y>) per row; dx may be dy.
void launch_softmax_rows_backward(const void* dy, const void* y, void* dx, DType dtype,
                                  std::int64_t rows, std::int64_t width, cudaStream_t stream);

void launch_relu6_forward(const void* x, void* y, DType dtype, std::int64_t n,
                          cudaStream_t stream);
// dx = dy where 0 < y < 6, else 0.
void launch_relu6_backward(const void* dy, const void* y, void* dx, DType dtype, std::int64_t n,
                           cudaStream_t stream);

// y[s, i] = factor[s] * x[s, i] over [samples, per_sample].
void launch_scale_samples(const void* x, const float* factor, void* y, DType dtype,
                          std::int64_t samples, std::int64_t per_sample, cudaStream_t stream);

}  // namespace pfc::cuda
