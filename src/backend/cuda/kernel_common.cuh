// Device-side pieces shared by our kernels: f16/bf16/f32 loads and stores through float
// (stores rounded to nearest, or stochastically for stored 16-bit values), aligned packets for
// vectorised elementwise loops, NaN-propagating max, warp and block reductions, and the
// element-type dispatch. Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/launch_shape.h"
#include "core/dtype.h"
#include "core/float16_bits.h"
#include "core/stochastic_rounding.h"

namespace pfc::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __ushort_as_bfloat16(bf16_bits_nearest(v));
}

// v stored as T: f32 as it is; f16 and bf16 rounded stochastically with the uniform bits of
// `element` in `stream` (core/stochastic_rounding.h), exactly as the CPU backend rounds them.
template <class T>
__device__ __forceinline__ T store_rounded(float v, std::uint64_t stream, std::uint64_t element) {
  if constexpr (std::is_same_v<T, __half>) {
    return __ushort_as_half(f16_bits_stochastic(v, rounding_bits(stream, element)));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __ushort_as_bfloat16(bf16_bits_stochastic(v, rounding_bits(stream, element)));
  } else {
    return v;
  }
}

// N consecutive elements, aligned to their total size so one load or store moves them.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <int N, class T>
__device__ __forceinline__ void load_float(const T* p, std::int64_t i, float (&out)[N]) {
  if constexpr (N == 1) {
    out[0] = to_float(p[i]);
  } else {
    const Pack<T, N> pack = *reinterpret_cast<const Pack<T, N>*>(p + i);
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = to_float(pack.v[k]);
  }
}

template <int N, class T>
__device__ __forceinline__ void store_float(T* p, std::int64_t i, const float (&in)[N]) {
  if constexpr (N == 1) {
    p[i] = from_float<T>(in[0]);
  } else {
    Pack<T, N> pack;
#pragma unroll
    for (int k = 0; k < N; ++k) pack.v[k] = from_float<T>(in[k]);
    *reinterpret_cast<Pack<T, N>*>(p + i) = pack;
  }
}

// Elements per thread-step of the vectorised loops: 16 bytes of f32, 8 of f16.
constexpr int kPack = 4;

// A grid-stride loop over n elements that hands `op` kPack elements at a time (op.template
// run<kPack>(i)), or one at a time when the pointers are not aligned for packets (N = 1) and
// for the tail.
template <int N, class Op>
__global__ void map_kernel(std::int64_t n, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * N;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * N;
       i < n; i += stride) {
    if (N == 1 || i + N <= n) {
      op.template run<N>(i);
    } else {
      for (std::int64_t j = i; j < n; ++j) op.template run<1>(j);
    }
  }
}

constexpr int kMapBlock = 256;

template <class Op>
void launch_map(std::int64_t n, bool packed, const Op& op, cudaStream_t stream) {
  if (n == 0) return;
  if (packed) {
    map_kernel<kPack, Op>
        <<<grid_size(ceil_div(n, kPack), kMapBlock), kMapBlock, 0, stream>>>(n, op);
  } else {
    map_kernel<1, Op><<<grid_size(n, kMapBlock), kMapBlock, 0, stream>>>(n, op);
  }
  PFC_CHECK_LAUNCH();
}

// max that returns NaN when either operand is NaN (fmaxf would hide it).
__device__ __forceinline__ float max_nan(float a, float b) { return (a != a || a > b) ? a : b; }

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return max_nan(a, b); }
};

template <class Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces over a one-dimensional block; the result is valid in thread 0.
template <class Op>
__device__ __forceinline__ float block_reduce(float v, Op op, float identity) {
  __shared__ float warp_results[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  __syncthreads();  // the shared array may still be read by a previous call
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? warp_results[lane] : identity;
    v = warp_reduce(v, op);
  }
  return v;
}

// Calls f(T{}) with T = __half, __nv_bfloat16 or float for the element type of stored values
// (class centres and their optimiser moments).
template <class F>
void dispatch_stored(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::f16:
      f(__half{});
      return;
    case DType::bf16:
      f(__nv_bfloat16{});
      return;
    case DType::f32:
      f(float{});
      return;
    default:
      throw_unsupported_dtype(op, dtype);
  }
}

// Calls f(T{}) with T = __half or float for a floating element type the kernels support.
template <class F>
void dispatch_float(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::f16:
      f(__half{});
      return;
    case DType::f32:
      f(float{});
      return;
    default:
      throw_unsupported_dtype(op, dtype);
  }
}

}  // namespace pfc::cuda
