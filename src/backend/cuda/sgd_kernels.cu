// SGD with momentum and weight decay. CPU reference: src/backend/cpu/cpu_sgd.cpp
// (sgd_update, sgd_update_rows), after torch.optim.SGD: g' = g + wd * w; m = momentum * m + g';
// w -= lr * m. The row form is the seed's partial_fc.py: only the sampled rows move; the
// sparse-gradient form is PartialFC_V2's dense parameter: every row moves, the gradient is zero
// off the sampled rows (sparse_grad_rows.cuh).
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/sgd_kernels.h"
#include "backend/cuda/sparse_grad_rows.cuh"

namespace pfc::cuda {

namespace {

struct Coefficients {
  float lr, momentum, weight_decay;
};

__device__ __forceinline__ void sgd_step(float& w, float& m, float g, const Coefficients& k) {
  const float decayed = fmaf(k.weight_decay, w, g);
  m = fmaf(k.momentum, m, decayed);
  w = fmaf(-k.lr, m, w);
}

template <class TG>
struct DenseOp {
  float* w;
  const TG* g;
  float* m;
  Coefficients k;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float vw[N], vg[N], vm[N];
    load_float<N>(w, i, vw);
    load_float<N>(g, i, vg);
    load_float<N>(m, i, vm);
#pragma unroll
    for (int j = 0; j < N; ++j) sgd_step(vw[j], vm[j], vg[j], k);
    store_float<N>(w, i, vw);
    store_float<N>(m, i, vm);
  }
};

template <class TG>
__global__ void sparse_kernel(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                              const std::int64_t* index, const TG* g, std::int64_t count,
                              Coefficients k, int* error_flag, int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t row = index[i];
    if (row < 0 || row >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    float* wr = w + row * cols;
    float* mr = m + row * cols;
    const TG* gr = g + i * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float vw = wr[c], vm = mr[c];
      sgd_step(vw, vm, to_float(gr[c]), k);
      wr[c] = vw;
      mr[c] = vm;
    }
  }
}

template <class TG>
__global__ void sparse_grad_kernel(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const TG* g, std::int64_t count,
                                   Coefficients k, int* error_flag, int code) {
  for_each_table_row(table_rows, index, count, error_flag, code,
                     [&](std::int64_t row, std::int64_t pos) {
                       float* wr = w + row * cols;
                       float* mr = m + row * cols;
                       const TG* gr = pos >= 0 ? g + pos * cols : nullptr;
                       for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
                         float vw = wr[c], vm = mr[c];
                         sgd_step(vw, vm, gr ? to_float(gr[c]) : 0.0f, k);
                         wr[c] = vw;
                         mr[c] = vm;
                       }
                     });
}

Coefficients coefficients(const SgdConstants& c) {
  return {static_cast<float>(c.lr), static_cast<float>(c.momentum),
          static_cast<float>(c.weight_decay)};
}

}  // namespace

void launch_sgd_update(float* w, const void* g, DType g_dtype, float* m, std::int64_t n,
                       const SgdConstants& c, cudaStream_t stream) {
  dispatch_float(g_dtype, "sgd_update", [&](auto tag) {
    using TG = decltype(tag);
    const bool packed = is_aligned(w, sizeof(float) * kPack) &&
                        is_aligned(m, sizeof(float) * kPack) && is_aligned(g, sizeof(TG) * kPack);
    launch_map(n, packed, DenseOp<TG>{w, static_cast<const TG*>(g), m, coefficients(c)}, stream);
  });
}

void launch_sgd_update_rows(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                            const std::int64_t* index, const void* g, DType g_dtype,
                            std::int64_t count, const SgdConstants& c, int* error_flag, int code,
                            cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  dispatch_float(g_dtype, "sgd_update_rows", [&](auto tag) {
    using TG = decltype(tag);
    sparse_kernel<TG><<<grid_size(count, 1, 32), kBlock, 0, stream>>>(
        w, m, table_rows, cols, index, static_cast<const TG*>(g), count, coefficients(c),
        error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

void launch_sgd_update_sparse_grad(float* w, float* m, std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const void* g, DType g_dtype,
                                   std::int64_t count, const SgdConstants& c, int* error_flag,
                                   int code, cudaStream_t stream) {
  if (table_rows == 0) return;
  constexpr int kBlock = 128;
  dispatch_float(g_dtype, "sgd_update_sparse_grad", [&](auto tag) {
    using TG = decltype(tag);
    sparse_grad_kernel<TG><<<sparse_grad_grid(table_rows, kBlock), kBlock, 0, stream>>>(
        w, m, table_rows, cols, index, static_cast<const TG*>(g), count, coefficients(c),
        error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

}  // namespace pfc::cuda
