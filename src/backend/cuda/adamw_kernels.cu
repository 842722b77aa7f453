// AdamW with decoupled weight decay and bias-corrected moments. CPU reference:
// src/backend/cpu/cpu_adamw.cpp (adamw_update, adamw_update_rows), after torch.optim.AdamW.
// Arithmetic in f32 on f32 masters and moments, or on stored 16-bit ones read into f32 and
// rounded back stochastically (stored_values.cuh); an f16 gradient is widened first. The row
// form updates the sampled class centres of a PartialFC shard and their moments only; the
// sparse-gradient form every row, the gradient zero off the sampled rows (PartialFC_V2's dense
// parameter, sparse_grad_rows.cuh).
#include "backend/cuda/adamw_kernels.h"
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/sparse_grad_rows.cuh"
#include "backend/cuda/stored_values.cuh"

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

template <class TW, class TM, class TG>
struct DenseOp {
  TW* w;
  const TG* g;
  TM* m;
  TM* v;
  Coefficients k;
  RoundingStreams r;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float vw[N], vg[N], vm[N], vv[N];
    load_float<N>(w, i, vw);
    load_float<N>(g, i, vg);
    load_float<N>(m, i, vm);
    load_float<N>(v, i, vv);
#pragma unroll
    for (int j = 0; j < N; ++j) adamw_step(vw[j], vm[j], vv[j], vg[j], k);
    const std::uint64_t element = r.first_element + static_cast<std::uint64_t>(i);
    store_rounded_float<N>(w, i, vw, r.weight, element);
    store_rounded_float<N>(m, i, vm, r.first_moment, element);
    store_rounded_float<N>(v, i, vv, r.second_moment, element);
  }
};

template <class TW, class TM, class TG>
__global__ void sparse_kernel(TW* w, TM* m, TM* v, std::int64_t table_rows, std::int64_t cols,
                              const std::int64_t* index, const TG* g, std::int64_t count,
                              Coefficients k, RoundingStreams r, int* error_flag, int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t row = index[i];
    if (row < 0 || row >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    const std::int64_t base = row * cols;
    const TG* gr = g + i * cols;
    const std::uint64_t first = r.first_element + static_cast<std::uint64_t>(base);
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float vw = to_float(w[base + c]), vm = to_float(m[base + c]), vv = to_float(v[base + c]);
      adamw_step(vw, vm, vv, to_float(gr[c]), k);
      const std::uint64_t element = first + static_cast<std::uint64_t>(c);
      w[base + c] = store_rounded<TW>(vw, r.weight, element);
      m[base + c] = store_rounded<TM>(vm, r.first_moment, element);
      v[base + c] = store_rounded<TM>(vv, r.second_moment, element);
    }
  }
}

template <class TW, class TM, class TG>
__global__ void sparse_grad_kernel(TW* w, TM* m, TM* v, std::int64_t table_rows,
                                   std::int64_t cols, const std::int64_t* index, const TG* g,
                                   std::int64_t count, Coefficients k, RoundingStreams r,
                                   int* error_flag, int code) {
  for_each_table_row(table_rows, index, count, error_flag, code,
                     [&](std::int64_t row, std::int64_t pos) {
                       const std::int64_t base = row * cols;
                       const TG* gr = pos >= 0 ? g + pos * cols : nullptr;
                       const std::uint64_t first =
                           r.first_element + static_cast<std::uint64_t>(base);
                       for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
                         float vw = to_float(w[base + c]), vm = to_float(m[base + c]),
                               vv = to_float(v[base + c]);
                         adamw_step(vw, vm, vv, gr ? to_float(gr[c]) : 0.0f, k);
                         const std::uint64_t element = first + static_cast<std::uint64_t>(c);
                         w[base + c] = store_rounded<TW>(vw, r.weight, element);
                         m[base + c] = store_rounded<TM>(vm, r.first_moment, element);
                         v[base + c] = store_rounded<TM>(vv, r.second_moment, element);
                       }
                     });
}

}  // namespace

void launch_adamw_update(void* w, DType w_dtype, const void* g, DType g_dtype, void* m, void* v,
                         DType moment_dtype, std::int64_t n, std::int64_t cols,
                         const AdamWConstants& c, const AdamWRounding& rounding,
                         cudaStream_t stream) {
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, moment_dtype, "adamw_update", [&](auto w_tag, auto m_tag) {
    dispatch_float(g_dtype, "adamw_update", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      const bool packed = is_aligned(w, sizeof(TW) * kPack) && is_aligned(m, sizeof(TM) * kPack) &&
                          is_aligned(v, sizeof(TM) * kPack) && is_aligned(g, sizeof(TG) * kPack);
      launch_map(n, packed,
                 DenseOp<TW, TM, TG>{static_cast<TW*>(w), static_cast<const TG*>(g),
                                     static_cast<TM*>(m), static_cast<TM*>(v), coefficients(c), r},
                 stream);
    });
  });
}

void launch_adamw_update_rows(void* w, DType w_dtype, void* m, void* v, DType moment_dtype,
                              std::int64_t table_rows, std::int64_t cols,
                              const std::int64_t* index, const void* g, DType g_dtype,
                              std::int64_t count, const AdamWConstants& c,
                              const AdamWRounding& rounding, int* error_flag, int code,
                              cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, moment_dtype, "adamw_update_rows", [&](auto w_tag, auto m_tag) {
    dispatch_float(g_dtype, "adamw_update_rows", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      sparse_kernel<TW, TM, TG><<<grid_size(count, 1, 32), kBlock, 0, stream>>>(
          static_cast<TW*>(w), static_cast<TM*>(m), static_cast<TM*>(v), table_rows, cols, index,
          static_cast<const TG*>(g), count, coefficients(c), r, error_flag, code);
      PFC_CHECK_LAUNCH();
    });
  });
}

void launch_adamw_update_sparse_grad(void* w, DType w_dtype, void* m, void* v,
                                     DType moment_dtype, std::int64_t table_rows,
                                     std::int64_t cols, const std::int64_t* index, const void* g,
                                     DType g_dtype, std::int64_t count, const AdamWConstants& c,
                                     const AdamWRounding& rounding, int* error_flag, int code,
                                     cudaStream_t stream) {
  if (table_rows == 0) return;
  constexpr int kBlock = 128;
  const RoundingStreams r = rounding_streams(rounding.key, rounding.first_row, cols);
  dispatch_optimised(w_dtype, moment_dtype, "adamw_update_sparse_grad", [&](auto w_tag,
                                                                            auto m_tag) {
    dispatch_float(g_dtype, "adamw_update_sparse_grad", [&](auto g_tag) {
      using TW = decltype(w_tag);
      using TM = decltype(m_tag);
      using TG = decltype(g_tag);
      sparse_grad_kernel<TW, TM, TG><<<sparse_grad_grid(table_rows, kBlock), kBlock, 0, stream>>>(
          static_cast<TW*>(w), static_cast<TM*>(m), static_cast<TM*>(v), table_rows, cols, index,
          static_cast<const TG*>(g), count, coefficients(c), r, error_flag, code);
      PFC_CHECK_LAUNCH();
    });
  });
}

}  // namespace pfc::cuda
