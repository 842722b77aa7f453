// AdamW with decoupled weight decay and bias-corrected moments. CPU reference:
// src/backend/cpu/cpu_adamw.cpp (adamw_update, adamw_update_rows), after torch.optim.AdamW.
// Arithmetic in f32 on f32 masters and moments; an f16 gradient is widened first. The row
// form updates the sampled class centres of a PartialFC shard and their moments only; the
// sparse-gradient form every row, the gradient zero off the sampled rows (PartialFC_V2's dense
// parameter, sparse_grad_rows.cuh).
#include "backend/cuda/adamw_kernels.h"
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/sparse_grad_rows.cuh"

namespace pfc::cuda {

namespace {

struct Coefficients {
  float decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size, bias2_sqrt, eps;
};

Coefficients coefficients(const AdamWConstants& c) {
  return {static_cast<float>(c.decay),       static_cast<float>(c.beta1),
          static_cast<float>(1.0 - c.beta1), static_cast<float>(c.beta2),
          static_cast<float>(1.0 - c.beta2), static_cast<float>(c.step_size),
          static_cast<float>(c.bias2_sqrt),  static_cast<float>(c.eps)};
}

__device__ __forceinline__ void adamw_step(float& w, float& m, float& v, float g,
                                           const Coefficients& k) {
  w *= k.decay;
  m = k.beta1 * m + k.one_minus_beta1 * g;
  v = k.beta2 * v + k.one_minus_beta2 * g * g;
  w -= k.step_size * m / (sqrtf(v) / k.bias2_sqrt + k.eps);
}

template <class TG>
struct DenseOp {
  float* w;
  const TG* g;
  float* m;
  float* v;
  Coefficients k;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float vw[N], vg[N], vm[N], vv[N];
    load_float<N>(w, i, vw);
    load_float<N>(g, i, vg);
    load_float<N>(m, i, vm);
    load_float<N>(v, i, vv);
#pragma unroll
    for (int j = 0; j < N; ++j) adamw_step(vw[j], vm[j], vv[j], vg[j], k);
    store_float<N>(w, i, vw);
    store_float<N>(m, i, vm);
    store_float<N>(v, i, vv);
  }
};

template <class TG>
__global__ void sparse_kernel(float* w, float* m, float* v, std::int64_t table_rows,
                              std::int64_t cols, const std::int64_t* index, const TG* g,
                              std::int64_t count, Coefficients k, int* error_flag, int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t row = index[i];
    if (row < 0 || row >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    const std::int64_t base = row * cols;
    const TG* gr = g + i * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      adamw_step(w[base + c], m[base + c], v[base + c], to_float(gr[c]), k);
  }
}

template <class TG>
__global__ void sparse_grad_kernel(float* w, float* m, float* v, std::int64_t table_rows,
                                   std::int64_t cols, const std::int64_t* index, const TG* g,
                                   std::int64_t count, Coefficients k, int* error_flag, int code) {
  for_each_table_row(table_rows, index, count, error_flag, code,
                     [&](std::int64_t row, std::int64_t pos) {
                       const std::int64_t base = row * cols;
                       const TG* gr = pos >= 0 ? g + pos * cols : nullptr;
                       for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
                         adamw_step(w[base + c], m[base + c], v[base + c],
                                    gr ? to_float(gr[c]) : 0.0f, k);
                     });
}

}  // namespace

void launch_adamw_update(float* w, const void* g, DType g_dtype, float* m, float* v,
                         std::int64_t n, const AdamWConstants& c, cudaStream_t stream) {
  dispatch_float(g_dtype, "adamw_update", [&](auto tag) {
    using TG = decltype(tag);
    const bool packed = is_aligned(w, sizeof(float) * kPack) &&
                        is_aligned(m, sizeof(float) * kPack) &&
                        is_aligned(v, sizeof(float) * kPack) && is_aligned(g, sizeof(TG) * kPack);
    launch_map(n, packed, DenseOp<TG>{w, static_cast<const TG*>(g), m, v, coefficients(c)},
               stream);
  });
}

void launch_adamw_update_rows(float* w, float* m, float* v, std::int64_t table_rows,
                              std::int64_t cols, const std::int64_t* index, const void* g,
                              DType g_dtype, std::int64_t count, const AdamWConstants& c,
                              int* error_flag, int code, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  dispatch_float(g_dtype, "adamw_update_rows", [&](auto tag) {
    using TG = decltype(tag);
    sparse_kernel<TG><<<grid_size(count, 1, 32), kBlock, 0, stream>>>(
        w, m, v, table_rows, cols, index, static_cast<const TG*>(g), count, coefficients(c),
        error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

void launch_adamw_update_sparse_grad(float* w, float* m, float* v, std::int64_t table_rows,
                                     std::int64_t cols, const std::int64_t* index, const void* g,
                                     DType g_dtype, std::int64_t count, const AdamWConstants& c,
                                     int* error_flag, int code, cudaStream_t stream) {
  if (table_rows == 0) return;
  constexpr int kBlock = 128;
  dispatch_float(g_dtype, "adamw_update_sparse_grad", [&](auto tag) {
    using TG = decltype(tag);
    sparse_grad_kernel<TG><<<sparse_grad_grid(table_rows, kBlock), kBlock, 0, stream>>>(
        w, m, v, table_rows, cols, index, static_cast<const TG*>(g), count, coefficients(c),
        error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

}  // namespace pfc::cuda
