// Elementwise kernels. CPU reference: src/backend/cpu/cpu_tensor_ops.cpp (fill, cast),
// cpu_elementwise.cpp (add, axpy, scale), cpu_gemm.cpp (add_row_vector). f16 values are read
// into f32, computed there and rounded once on store; bf16 (stored values) only fills, draws
// and casts.
#include <cuda_fp16.h>

#include <type_traits>

#include "backend/cuda/elementwise_kernels.h"
#include "backend/cuda/kernel_common.cuh"
#include "core/counter_rng.h"

namespace pfc::cuda {

namespace {

template <class T>
struct FillOp {
  T* x;
  T value;
  template <int N>
  __device__ void run(std::int64_t i) const {
    if constexpr (N == 1) {
      x[i] = value;
    } else {
      Pack<T, N> pack;
#pragma unroll
      for (int k = 0; k < N; ++k) pack.v[k] = value;
      *reinterpret_cast<Pack<T, N>*>(x + i) = pack;
    }
  }
};

template <class T>
void fill_as(void* x, std::int64_t n, T value, cudaStream_t stream) {
  const bool packed = is_aligned(x, sizeof(T) * kPack);
  launch_map(n, packed, FillOp<T>{static_cast<T*>(x), value}, stream);
}

template <class T>
struct FillNormalOp {
  T* x;
  std::uint64_t key, first_index;
  double stddev;
  template <int N>
  __device__ void run(std::int64_t i) const {
#pragma unroll
    for (int k = 0; k < N; ++k)
      x[i + k] = from_float<T>(
          normal_value(key, first_index + static_cast<std::uint64_t>(i + k), stddev));
  }
};

// Conversions of one element between the floating types.
template <class To, class From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half> || std::is_same_v<From, __nv_bfloat16>) {
    return convert<To>(to_float(v));
  } else if constexpr (std::is_same_v<To, __half> || std::is_same_v<To, __nv_bfloat16>) {
    return from_float<To>(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class From, class To>
struct CastOp {
  const From* src;
  To* dst;
  template <int N>
  __device__ void run(std::int64_t i) const {
#pragma unroll
    for (int k = 0; k < N; ++k) dst[i + k] = convert<To>(src[i + k]);
  }
};

template <class From, class To>
void cast_as(const void* src, void* dst, std::int64_t n, cudaStream_t stream) {
  const bool packed = is_aligned(src, sizeof(From) * kPack) && is_aligned(dst, sizeof(To) * kPack);
  launch_map(n, packed, CastOp<From, To>{static_cast<const From*>(src), static_cast<To*>(dst)},
             stream);
}

template <class F>
void dispatch_cast_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f16:
      f(__half{});
      return;
    case DType::f32:
      f(float{});
      return;
    case DType::f64:
      f(double{});
      return;
    case DType::bf16:
      f(__nv_bfloat16{});
      return;
    default:
      throw_unsupported_dtype("cast", dtype);
  }
}

template <class T>
struct AddOp {
  const T* a;
  const T* b;
  T* y;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float va[N], vb[N], out[N];
    load_float<N>(a, i, va);
    load_float<N>(b, i, vb);
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = va[k] + vb[k];
    store_float<N>(y, i, out);
  }
};

template <class TX, class TY>
struct AxpyOp {
  float alpha;
  const TX* x;
  TY* y;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float vx[N], vy[N];
    load_float<N>(x, i, vx);
    load_float<N>(y, i, vy);
#pragma unroll
    for (int k = 0; k < N; ++k) vy[k] = fmaf(alpha, vx[k], vy[k]);
    store_float<N>(y, i, vy);
  }
};

template <class T>
struct ScaleOp {
  T* x;
  float alpha;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] *= alpha;
    store_float<N>(x, i, v);
  }
};

template <class T, class TB>
struct AddRowVectorOp {
  T* x;
  const TB* bias;
  std::int64_t cols;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
    std::int64_t c = i % cols;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      v[k] += to_float(bias[c]);
      if (++c == cols) c = 0;
    }
    store_float<N>(x, i, v);
  }
};

}  // namespace

void launch_fill_normal(void* x, DType dtype, std::int64_t n, std::uint64_t key,
                        std::uint64_t first_index, double stddev, cudaStream_t stream) {
  dispatch_stored(dtype, "fill_normal", [&](auto tag) {
    using T = decltype(tag);
    launch_map(n, false, FillNormalOp<T>{static_cast<T*>(x), key, first_index, stddev}, stream);
  });
}

void launch_fill(void* x, DType dtype, std::int64_t n, double value, cudaStream_t stream) {
  switch (dtype) {
    case DType::f16:
      fill_as(x, n, __float2half_rn(static_cast<float>(value)), stream);
      return;
    case DType::f32:
      fill_as(x, n, static_cast<float>(value), stream);
      return;
    case DType::f64:
      fill_as(x, n, value, stream);
      return;
    case DType::i32:
      fill_as(x, n, static_cast<std::int32_t>(value), stream);
      return;
    case DType::i64:
      fill_as(x, n, static_cast<std::int64_t>(value), stream);
      return;
    case DType::u8:
      fill_as(x, n, static_cast<std::uint8_t>(value), stream);
      return;
    case DType::bf16:
      fill_as(x, n, bf16_bits_nearest(static_cast<float>(value)), stream);  // its bit pattern
      return;
  }
}

void launch_cast(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::int64_t n,
                 cudaStream_t stream) {
  dispatch_cast_type(src_dtype, [&](auto from) {
    dispatch_cast_type(
        dst_dtype, [&](auto to) { cast_as<decltype(from), decltype(to)>(src, dst, n, stream); });
  });
}

void launch_add(const void* a, const void* b, void* y, DType dtype, std::int64_t n,
                cudaStream_t stream) {
  dispatch_float(dtype, "add", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(a, sizeof(T) * kPack) && is_aligned(b, sizeof(T) * kPack) &&
                        is_aligned(y, sizeof(T) * kPack);
    launch_map(n, packed,
               AddOp<T>{static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y)},
               stream);
  });
}

void launch_axpy(double alpha, const void* x, DType x_dtype, void* y, DType y_dtype, std::int64_t n,
                 cudaStream_t stream) {
  dispatch_float(x_dtype, "axpy", [&](auto x_tag) {
    dispatch_float(y_dtype, "axpy", [&](auto y_tag) {
      using TX = decltype(x_tag);
      using TY = decltype(y_tag);
      const bool packed = is_aligned(x, sizeof(TX) * kPack) && is_aligned(y, sizeof(TY) * kPack);
      launch_map(
          n, packed,
          AxpyOp<TX, TY>{static_cast<float>(alpha), static_cast<const TX*>(x), static_cast<TY*>(y)},
          stream);
    });
  });
}

void launch_scale(void* x, DType dtype, std::int64_t n, double alpha, cudaStream_t stream) {
  dispatch_float(dtype, "scale", [&](auto tag) {
    using T = decltype(tag);
    launch_map(n, is_aligned(x, sizeof(T) * kPack),
               ScaleOp<T>{static_cast<T*>(x), static_cast<float>(alpha)}, stream);
  });
}

void launch_add_row_vector(void* x, DType x_dtype, std::int64_t rows, std::int64_t cols,
                           const void* bias, DType bias_dtype, cudaStream_t stream) {
  dispatch_float(x_dtype, "add_row_vector", [&](auto x_tag) {
    dispatch_float(bias_dtype, "add_row_vector", [&](auto b_tag) {
      using T = decltype(x_tag);
      using TB = decltype(b_tag);
      launch_map(rows * cols, is_aligned(x, sizeof(T) * kPack),
                 AddRowVectorOp<T, TB>{static_cast<T*>(x), static_cast<const TB*>(bias), cols},
                 stream);
    });
  });
}

}  // namespace pfc::cuda
