// The margin softmax of PartialFC. CPU reference: src/backend/cpu/cpu_partial_fc_ops.cpp
// (margin_logits, exp_and_row_sum, softmax_grad), after arcface_torch's PartialFC_V2 and
// CombinedMarginLoss: clamp to [-1, 1]; the target logit becomes cos(m1 * acos(c) + m2) - m3
// (in f64 like the CPU, there is one per row; CosFace skips the acos); everything times s;
// the margin is straight-through in the gradient, or exact through margin_gradient_factor and
// scale_target_column (one thread per row). Each row is split into chunks of kChunk columns,
// one block per (chunk, row); per-chunk maxima and sums are folded by one warp per row, in a fixed
// order.
#include <algorithm>
#include <cmath>

#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/margin_softmax_kernels.h"
#include "backend/margin_derivative.h"

namespace pfc::cuda {

namespace {

constexpr int kBlock = 256;
constexpr std::int64_t kChunk = kBlock * 16;

std::int64_t chunks_per_row(std::int64_t classes) {
  return std::max<std::int64_t>(1, ceil_div(classes, kChunk));
}

dim3 chunk_grid(std::int64_t batch, std::int64_t classes) {
  return dim3(static_cast<unsigned>(chunks_per_row(classes)), static_cast<unsigned>(batch));
}

__device__ __forceinline__ bool bad_label(std::int64_t label, std::int64_t classes) {
  return label < -1 || label >= classes;
}

template <class T>
__global__ void margin_kernel(T* logits, std::int64_t classes, const std::int64_t* label,
                              MarginConstants m, float* partial_max, int* error_flag, int code) {
  const std::int64_t b = blockIdx.y;
  const std::int64_t target = label[b];
  if (blockIdx.x == 0 && threadIdx.x == 0 && bad_label(target, classes))
    atomicCAS(error_flag, 0, code);
  T* row = logits + b * classes;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * kChunk;
  const std::int64_t end = begin + kChunk < classes ? begin + kChunk : classes;
  const float s = static_cast<float>(m.scale);
  float row_max = -INFINITY;
  for (std::int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    float c = to_float(row[j]);
    c = c < -1.0f ? -1.0f : (c > 1.0f ? 1.0f : c);  // keeps NaN, unlike fminf/fmaxf
    float logit;
    if (j == target) {
      // CosFace (and no margin) subtracts from the cosine itself, without a round trip
      // through acos; the target is rounded to f32 before the scale, as on the CPU.
      const double t = (m.m1 == 1.0 && m.m2 == 0.0)
                           ? static_cast<double>(c) - m.m3
                           : cos(m.m1 * acos(static_cast<double>(c)) + m.m2) - m.m3;
      logit = s * static_cast<float>(t);
    } else {
      logit = s * c;
    }
    const T stored = from_float<T>(logit);
    row[j] = stored;
    row_max = max_nan(row_max, to_float(stored));
  }
  row_max = block_reduce(row_max, MaxOp{}, -INFINITY);
  if (threadIdx.x == 0) partial_max[b * gridDim.x + blockIdx.x] = row_max;
}

template <class T>
__global__ void exp_kernel(T* logits, std::int64_t classes, const float* global_max,
                           float* partial_sum) {
  const std::int64_t b = blockIdx.y;
  T* row = logits + b * classes;
  const float shift = global_max[b];
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * kChunk;
  const std::int64_t end = begin + kChunk < classes ? begin + kChunk : classes;
  float sum = 0.0f;
  for (std::int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    const T stored = from_float<T>(expf(to_float(row[j]) - shift));
    row[j] = stored;
    sum += to_float(stored);
  }
  sum = block_reduce(sum, SumOp{}, 0.0f);
  if (threadIdx.x == 0) partial_sum[b * gridDim.x + blockIdx.x] = sum;
}

// One warp per row folds the row's chunk partials: max (kMax) or an f64 sum.
template <bool kMax>
__global__ void fold_chunks(const float* partial, std::int64_t batch, std::int64_t chunks,
                            float* out) {
  const std::int64_t b =
      static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
  if (b >= batch) return;
  const int lane = threadIdx.x & 31;
  const float* p = partial + b * chunks;
  if constexpr (kMax) {
    float v = -INFINITY;
    for (std::int64_t k = lane; k < chunks; k += 32) v = max_nan(v, p[k]);
    v = warp_reduce(v, MaxOp{});
    if (lane == 0) out[b] = v;
  } else {
    double v = 0.0;
    for (std::int64_t k = lane; k < chunks; k += 32) v += p[k];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0) out[b] = static_cast<float>(v);
  }
}

template <bool kMax>
void launch_fold(const float* partial, std::int64_t batch, std::int64_t chunks, float* out,
                 cudaStream_t stream) {
  constexpr int kRowsPerBlock = 8;
  fold_chunks<kMax>
      <<<static_cast<unsigned>(ceil_div(batch, kRowsPerBlock)), kRowsPerBlock * 32, 0, stream>>>(
          partial, batch, chunks, out);
  PFC_CHECK_LAUNCH();
}

template <class T>
__global__ void softmax_grad_kernel(T* e, std::int64_t classes, const float* global_sum,
                                    const std::int64_t* label, float grad_scale, float* target_prob,
                                    int* error_flag, int code) {
  const std::int64_t b = blockIdx.y;
  const std::int64_t target = label[b];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (bad_label(target, classes)) atomicCAS(error_flag, 0, code);
    if (target < 0) target_prob[b] = 0.0f;
  }
  T* row = e + b * classes;
  const float inv_sum = 1.0f / global_sum[b];
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * kChunk;
  const std::int64_t end = begin + kChunk < classes ? begin + kChunk : classes;
  for (std::int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    const float p = to_float(row[j]) * inv_sum;
    float onehot = 0.0f;
    if (j == target) {
      target_prob[b] = p;
      onehot = 1.0f;
    }
    row[j] = from_float<T>(grad_scale * (p - onehot));
  }
}

// Row b's target column, or -1 when it has none on this shard; a label outside [-1, classes)
// records `code` and counts as none.
__device__ __forceinline__ std::int64_t checked_target(const std::int64_t* label, std::int64_t b,
                                                       std::int64_t classes, int* error_flag,
                                                       int code) {
  const std::int64_t target = label[b];
  if (!bad_label(target, classes)) return target;
  atomicCAS(error_flag, 0, code);
  return -1;
}

template <class T>
__global__ void margin_factor_kernel(const T* cos, std::int64_t batch, std::int64_t classes,
                                     const std::int64_t* label, double m1, double m2,
                                     float* factor, int* error_flag, int code) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const std::int64_t target = checked_target(label, b, classes, error_flag, code);
  if (target < 0) {
    factor[b] = 1.0f;
    return;
  }
  float c = to_float(cos[b * classes + target]);
  c = c < -1.0f ? -1.0f : (c > 1.0f ? 1.0f : c);  // as margin_kernel clamps it, NaN kept
  factor[b] = static_cast<float>(margin_derivative(static_cast<double>(c), m1, m2));
}

template <class T>
__global__ void scale_target_kernel(T* grad, std::int64_t batch, std::int64_t classes,
                                    const std::int64_t* label, const float* factor,
                                    int* error_flag, int code) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const std::int64_t target = checked_target(label, b, classes, error_flag, code);
  if (target < 0) return;
  T& g = grad[b * classes + target];
  g = from_float<T>(to_float(g) * factor[b]);
}

unsigned row_blocks(std::int64_t batch) {
  return static_cast<unsigned>(ceil_div(batch, kBlock));
}

}  // namespace

std::size_t margin_softmax_scratch_bytes(std::int64_t batch, std::int64_t classes) {
  return static_cast<std::size_t>(batch * chunks_per_row(classes)) * sizeof(float);
}

void launch_margin_logits(void* cos_logits, DType dtype, std::int64_t batch, std::int64_t classes,
                          const std::int64_t* label, const MarginConstants& m, float* row_max,
                          void* scratch, int* error_flag, int code, cudaStream_t stream) {
  if (batch == 0) return;
  float* partial = static_cast<float*>(scratch);
  dispatch_float(dtype, "margin_logits", [&](auto tag) {
    using T = decltype(tag);
    margin_kernel<T><<<chunk_grid(batch, classes), kBlock, 0, stream>>>(
        static_cast<T*>(cos_logits), classes, label, m, partial, error_flag, code);
    PFC_CHECK_LAUNCH();
  });
  launch_fold<true>(partial, batch, chunks_per_row(classes), row_max, stream);
}

void launch_exp_and_row_sum(void* logits, DType dtype, std::int64_t batch, std::int64_t classes,
                            const float* global_max, float* row_sum, void* scratch,
                            cudaStream_t stream) {
  if (batch == 0) return;
  float* partial = static_cast<float*>(scratch);
  dispatch_float(dtype, "exp_and_row_sum", [&](auto tag) {
    using T = decltype(tag);
    exp_kernel<T><<<chunk_grid(batch, classes), kBlock, 0, stream>>>(static_cast<T*>(logits),
                                                                     classes, global_max, partial);
    PFC_CHECK_LAUNCH();
  });
  launch_fold<false>(partial, batch, chunks_per_row(classes), row_sum, stream);
}

void launch_softmax_grad(void* exp_logits, DType dtype, std::int64_t batch, std::int64_t classes,
                         const float* global_sum, const std::int64_t* label, double scale,
                         std::int64_t global_batch, float* target_prob, int* error_flag, int code,
                         cudaStream_t stream) {
  if (batch == 0) return;
  const float grad_scale = static_cast<float>(scale / static_cast<double>(global_batch));
  dispatch_float(dtype, "softmax_grad", [&](auto tag) {
    using T = decltype(tag);
    softmax_grad_kernel<T><<<chunk_grid(batch, classes), kBlock, 0, stream>>>(
        static_cast<T*>(exp_logits), classes, global_sum, label, grad_scale, target_prob,
        error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

void launch_margin_gradient_factor(const void* cos, DType dtype, std::int64_t batch,
                                   std::int64_t classes, const std::int64_t* label,
                                   const MarginConstants& m, float* factor, int* error_flag,
                                   int code, cudaStream_t stream) {
  if (batch == 0) return;
  dispatch_float(dtype, "margin_gradient_factor", [&](auto tag) {
    using T = decltype(tag);
    margin_factor_kernel<T><<<row_blocks(batch), kBlock, 0, stream>>>(
        static_cast<const T*>(cos), batch, classes, label, m.m1, m.m2, factor, error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

void launch_scale_target_column(void* grad, DType dtype, std::int64_t batch, std::int64_t classes,
                                const std::int64_t* label, const float* factor, int* error_flag,
                                int code, cudaStream_t stream) {
  if (batch == 0) return;
  dispatch_float(dtype, "scale_target_column", [&](auto tag) {
    using T = decltype(tag);
    scale_target_kernel<T><<<row_blocks(batch), kBlock, 0, stream>>>(
        static_cast<T*>(grad), batch, classes, label, factor, error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

}  // namespace pfc::cuda
