// SGD with momentum and weight decay. CPU reference: src/backend/cpu/cpu_sgd.cpp
// (sgd_update, sgd_update_rows), after torch.optim.SGD: g' = g + wd * w; m = momentum * m + g';
// w -= lr * m. The row form is the seed's partial_fc.py: only the sampled rows move; the
// sparse-gradient form is PartialFC_V2's dense parameter: every row moves, the gradient is zero
// off the sampled rows (sparse_grad_rows.cuh). Stored 16-bit weights and momentum are read
// into f32 and rounded back stochastically (stored_values.cuh).
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/sgd_kernels.h"
#include "backend/cuda/sparse_grad_rows.cuh"
#include "backend/cuda/stored_values.cuh"

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

template <class TW, class TM, class TG>
struct DenseOp {
  TW* w;
  const TG* g;
  TM* m;
  Coefficients k;
  RoundingStreams r;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float vw[N], vg[N], vm[N];
    load_float<N>(w, i, vw);
    load_float<N>(g, i, vg);
    load_float<N>(m, i, vm);
#pragma unroll
    for (int j = 0; j < N; ++j) sgd_step(vw[j], vm[j], vg[j], k);
    const std::uint64_t element = r.first_element + static_cast<std::uint64_t>(i);
    store_rounded_float<N>(w, i, vw, r.weight, element);
    store_rounded_float<N>(m, i, vm, r.first_moment, element);
  }
};

template <class TW, class TM, class TG>
__global__ void sparse_kernel(TW* w, TM* m, std::int64_t table_rows, std::int64_t cols,
                              const std::int64_t* index, const TG* g, std::int64_t count,
                              Coefficients k, RoundingStreams r, int* error_flag, int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t row = index[i];
    if (row < 0 || row >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    TW* wr = w + row * cols;
    TM* mr = m + row * cols;
    const TG* gr = g + i * cols;
    const std::uint64_t first = r.first_element + static_cast<std::uint64_t>(row * cols);
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float vw = to_float(wr[c]), vm = to_float(mr[c]);
      sgd_step(vw, vm, to_float(gr[c]), k);
      const std::uint64_t element = first + static_cast<std::uint64_t>(c);
      wr[c] = store_rounded<TW>(vw, r.weight, element);
      mr[c] = store_rounded<TM>(vm, r.first_moment, element);
    }
  }
}

template <class TW, class TM, class TG>
__global__ void sparse_grad_kernel(TW* w, TM* m, std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const TG* g, std::int64_t count,
                                   Coefficients k, RoundingStreams r, int* error_flag, int code) {
  for_each_table_row(table_rows, index, count, error_flag, code,
                     [&](std::int64_t row, std::int64_t pos) {
                       TW* wr = w + row * cols;
                       TM* mr = m + row * cols;
                       const TG* gr = pos >= 0 ? g + pos * cols : nullptr;
                       const std::uint64_t first =
                           r.first_element + static_cast<std::uint64_t>(row * cols);
                       for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
                         float vw = to_float(wr[c]), vm = to_float(mr[c]);
                         sgd_step(vw, vm, gr ? to_float(gr[c]) : 0.0f, k);
                         const std::uint64_t element = first + static_cast<std::uint64_t>(c);
                         wr[c] = store_rounded<TW>(vw, r.weight, element);
                         mr[c] = store_rounded<TM>(vm, r.first_moment, element);
                       }
                     });
}

Coefficients coefficients(const SgdConstants& c) {
  return {static_cast<float>(c.lr), static_cast<float>(c.momentum),
          static_cast<float>(c.weight_decay)};
}

}  // namespace

void launch_sgd_update(void* w, DType w_dtype, const void* g, DType g_dtype, void* m,
                       DType m_dtype, std::int64_t n, std::int64_t cols, const SgdConstants& c,
                       const SgdRounding& rounding, cudaStream_t stream) {
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, m_dtype, "sgd_update", [&](auto w_tag, auto m_tag) {
    dispatch_float(g_dtype, "sgd_update", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      const bool packed = is_aligned(w, sizeof(TW) * kPack) && is_aligned(m, sizeof(TM) * kPack) &&
                          is_aligned(g, sizeof(TG) * kPack);
      launch_map(n, packed,
                 DenseOp<TW, TM, TG>{static_cast<TW*>(w), static_cast<const TG*>(g),
                                     static_cast<TM*>(m), coefficients(c), r},
                 stream);
    });
  });
}

void launch_sgd_update_rows(void* w, DType w_dtype, void* m, DType m_dtype,
                            std::int64_t table_rows, std::int64_t cols, const std::int64_t* index,
                            const void* g, DType g_dtype, std::int64_t count,
                            const SgdConstants& c, const SgdRounding& rounding, int* error_flag,
                            int code, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, m_dtype, "sgd_update_rows", [&](auto w_tag, auto m_tag) {
    dispatch_float(g_dtype, "sgd_update_rows", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      sparse_kernel<TW, TM, TG><<<grid_size(count, 1, 32), kBlock, 0, stream>>>(
          static_cast<TW*>(w), static_cast<TM*>(m), table_rows, cols, index,
          static_cast<const TG*>(g), count, coefficients(c), r, error_flag, code);
      PFC_CHECK_LAUNCH();
    });
  });
}

void launch_sgd_update_sparse_grad(void* w, DType w_dtype, void* m, DType m_dtype,
                                   std::int64_t table_rows, std::int64_t cols,
                                   const std::int64_t* index, const void* g, DType g_dtype,
                                   std::int64_t count, const SgdConstants& c,
                                   const SgdRounding& rounding, int* error_flag, int code,
                                   cudaStream_t stream) {
  if (table_rows == 0) return;
  constexpr int kBlock = 128;
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, m_dtype, "sgd_update_sparse_grad", [&](auto w_tag, auto m_tag) {
    dispatch_float(g_dtype, "sgd_update_sparse_grad", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      sparse_grad_kernel<TW, TM, TG><<<sparse_grad_grid(table_rows, kBlock), kBlock, 0, stream>>>(
          static_cast<TW*>(w), static_cast<TM*>(m), table_rows, cols, index,
          static_cast<const TG*>(g), count, coefficients(c), r, error_flag, code);
      PFC_CHECK_LAUNCH();
    });
  });
}

}  // namespace pfc::cuda
