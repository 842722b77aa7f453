// AdamW with decoupled weight decay and bias-corrected moments. CPU reference:
// src/backend/cpu/cpu_adamw.cpp (adamw_update, adamw_update_rows), after torch.optim.AdamW.
// Arithmetic in the masters' type (f32 or f64); an f16 gradient is widened first. The sparse
// form updates the sampled class centres of a PartialFC shard and their moments only.
#include "backend/cuda/adamw_kernels.h"
#include "backend/cuda/kernel_common.cuh"

namespace pfc::cuda {

namespace {

__device__ __forceinline__ float widen(__half g) { return __half2float(g); }
__device__ __forceinline__ float widen(float g) { return g; }
__device__ __forceinline__ double widen(double g) { return g; }

template <class T>
struct Coefficients {
  T decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size, bias2_sqrt, eps;
};

template <class T>
Coefficients<T> coefficients(const AdamWConstants& c) {
  return {static_cast<T>(c.decay),     static_cast<T>(c.beta1),
          static_cast<T>(1.0 - c.beta1), static_cast<T>(c.beta2),
          static_cast<T>(1.0 - c.beta2), static_cast<T>(c.step_size),
          static_cast<T>(c.bias2_sqrt),  static_cast<T>(c.eps)};
}

template <class T>
__device__ __forceinline__ void adamw_step(T& w, T& m, T& v, T g, const Coefficients<T>& k) {
  w *= k.decay;
  m = k.beta1 * m + k.one_minus_beta1 * g;
  v = k.beta2 * v + k.one_minus_beta2 * g * g;
  w -= k.step_size * m / (sqrt(v) / k.bias2_sqrt + k.eps);
}

// One element per call: four streams in and three out, each read once, coalesced.
template <class T, class TG>
struct DenseOp {
  T* w;
  const TG* g;
  T* m;
  T* v;
  Coefficients<T> k;
  template <int N>
  __device__ void run(std::int64_t i) const {
#pragma unroll
    for (int j = 0; j < N; ++j)
      adamw_step(w[i + j], m[i + j], v[i + j], static_cast<T>(widen(g[i + j])), k);
  }
};

template <class T, class TG>
__global__ void sparse_kernel(T* w, T* m, T* v, std::int64_t table_rows, std::int64_t cols,
                              const std::int64_t* index, const TG* g, std::int64_t count,
                              Coefficients<T> k, int* error_flag, int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t row = index[i];
    if (row < 0 || row >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    const std::int64_t base = row * cols;
    const TG* gr = g + i * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      adamw_step(w[base + c], m[base + c], v[base + c], static_cast<T>(widen(gr[c])), k);
  }
}

// Calls f(T{}, TG{}) for the supported pairs: f32 masters with f16 or f32 gradients, f64
// masters with f64 gradients.
template <class F>
void dispatch_types(DType dtype, DType g_dtype, const char* op, F&& f) {
  if (dtype == DType::f32 && g_dtype == DType::f32) return f(float{}, float{});
  if (dtype == DType::f32 && g_dtype == DType::f16) return f(float{}, __half{});
  if (dtype == DType::f64 && g_dtype == DType::f64) return f(double{}, double{});
  throw_unsupported_dtype(op, dtype == DType::f64 ? g_dtype : dtype);
}

}  // namespace

void launch_adamw_update(void* w, const void* g, DType g_dtype, void* m, void* v, DType dtype,
                         std::int64_t n, const AdamWConstants& c, cudaStream_t stream) {
  dispatch_types(dtype, g_dtype, "adamw_update", [&](auto tag, auto grad_tag) {
    using T = decltype(tag);
    using TG = decltype(grad_tag);
    launch_map(n, false,
               DenseOp<T, TG>{static_cast<T*>(w), static_cast<const TG*>(g), static_cast<T*>(m),
                              static_cast<T*>(v), coefficients<T>(c)},
               stream);
  });
}

void launch_adamw_update_rows(void* w, void* m, void* v, DType dtype, std::int64_t table_rows,
                              std::int64_t cols, const std::int64_t* index, const void* g,
                              DType g_dtype, std::int64_t count, const AdamWConstants& c,
                              int* error_flag, int code, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  dispatch_types(dtype, g_dtype, "adamw_update_rows", [&](auto tag, auto grad_tag) {
    using T = decltype(tag);
    using TG = decltype(grad_tag);
    sparse_kernel<T, TG><<<grid_size(count, 1, 32), kBlock, 0, stream>>>(
        static_cast<T*>(w), static_cast<T*>(m), static_cast<T*>(v), table_rows, cols, index,
        static_cast<const TG*>(g), count, coefficients<T>(c), error_flag, code);
    PFC_CHECK_LAUNCH();
  });
}

}  // namespace pfc::cuda
