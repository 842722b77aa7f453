// PReLU with one slope per channel over x [rows, channels]. CPU reference:
// src/backend/cpu/cpu_prelu.cpp: y = x > 0 ? x : slope * x; dx = x > 0 ? dy : slope * dy;
// dslope = sum over rows of (x > 0 ? 0 : x * dy), as PyTorch's prelu backward.
#include "backend/cuda/channel_reduce.cuh"
#include "backend/cuda/norm_kernels.h"

namespace pfc::cuda {

namespace {

template <class T>
struct ForwardOp {
  const T* x;
  T* y;
  const float* slope;
  std::int64_t channels;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
    std::int64_t c = i % channels;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (!(v[k] > 0.0f)) v[k] *= slope[c];
      if (++c == channels) c = 0;
    }
    store_float<N>(y, i, v);
  }
};

// Writes dx while it sums the slope gradient: one pass over x and dy.
template <class T>
struct BackwardOp {
  const T* dy;
  const T* x;
  T* dx;
  const float* slope;
  std::int64_t channels;
  __device__ void accumulate(std::int64_t r, std::int64_t c, float (&acc)[1]) const {
    const std::int64_t i = r * channels + c;
    const float g = to_float(dy[i]);
    const float v = to_float(x[i]);
    if (v > 0.0f) {
      dx[i] = from_float<T>(g);
    } else {
      dx[i] = from_float<T>(slope[c] * g);
      acc[0] = fmaf(v, g, acc[0]);
    }
  }
};

struct SlopeGradFinalize {
  float* dslope;
  __device__ void operator()(std::int64_t c, const double (&t)[1]) const {
    dslope[c] = static_cast<float>(t[0]);
  }
};

}  // namespace

void launch_prelu_forward(const void* x, void* y, DType dtype, std::int64_t rows,
                          std::int64_t channels, const float* slope, cudaStream_t stream) {
  dispatch_float(dtype, "prelu_forward", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(x, sizeof(T) * kPack) && is_aligned(y, sizeof(T) * kPack);
    launch_map(rows * channels, packed,
               ForwardOp<T>{static_cast<const T*>(x), static_cast<T*>(y), slope, channels}, stream);
  });
}

std::size_t prelu_backward_scratch_bytes(std::int64_t rows, std::int64_t channels) {
  return channel_reduce_shape(rows, channels).scratch_bytes(1);
}

void launch_prelu_backward(const void* dy, const void* x, void* dx, DType dtype, std::int64_t rows,
                           std::int64_t channels, const float* slope, float* dslope, void* scratch,
                           cudaStream_t stream) {
  const ChannelReduceShape shape = channel_reduce_shape(rows, channels);
  dispatch_float(dtype, "prelu_backward", [&](auto tag) {
    using T = decltype(tag);
    launch_channel_reduce<1>(shape,
                             BackwardOp<T>{static_cast<const T*>(dy), static_cast<const T*>(x),
                                           static_cast<T*>(dx), slope, channels},
                             SlopeGradFinalize{dslope}, static_cast<float*>(scratch), stream);
  });
}

}  // namespace pfc::cuda
