// The Vision Transformer's kernels (transformer_kernels.h). Per-row kernels run one warp per
// row: LayerNorm's rows are a token's width (64 to 1280) and the softmax's a row of attention
// scores (144), and there are many rows. A lane writes only the elements it read itself, after
// the row's reductions, so the softmax runs in place. LayerNorm's parameter gradients are
// column sums over the rows (channel_reduce.cuh), deterministic as batch-norm's.
#include "backend/cuda/channel_reduce.cuh"
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/transformer_kernels.h"

namespace pfc::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

int row_blocks(std::int64_t rows) { return grid_size(rows, kWarpsPerBlock, 16); }

// The warp's row r, for every row of the grid-stride loop.
#define PFC_FOR_EACH_WARP_ROW(r, rows)                                                     \
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock +           \
                        (threadIdx.x >> 5);                                                \
       r < (rows); r += static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock)

template <class T>
__global__ void layernorm_forward(LayerNormForwardArgs a) {
  const int lane = threadIdx.x & 31;
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const float width = static_cast<float>(a.width);
  PFC_FOR_EACH_WARP_ROW(r, a.rows) {
    const T* xr = x + r * a.width;
    float sum = 0.0f;
    for (std::int64_t c = lane; c < a.width; c += 32) sum += to_float(xr[c]);
    const float mean = warp_reduce(sum, SumOp{}) / width;
    float squares = 0.0f;
    for (std::int64_t c = lane; c < a.width; c += 32) {
      const float d = to_float(xr[c]) - mean;
      squares = fmaf(d, d, squares);
    }
    const float var = warp_reduce(squares, SumOp{}) / width;
    const float invstd = 1.0f / sqrtf(var + static_cast<float>(a.eps));
    T* yr = y + r * a.width;
    for (std::int64_t c = lane; c < a.width; c += 32)
      yr[c] = from_float<T>(fmaf((to_float(xr[c]) - mean) * invstd, a.gamma[c], a.beta[c]));
    if (lane == 0) {
      a.saved_mean[r] = mean;
      a.saved_invstd[r] = invstd;
    }
  }
}

template <class T>
__global__ void layernorm_backward_data(LayerNormBackwardArgs a) {
  const int lane = threadIdx.x & 31;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);
  T* dx = static_cast<T*>(a.dx);
  const float width = static_cast<float>(a.width);
  PFC_FOR_EACH_WARP_ROW(r, a.rows) {
    const T* xr = x + r * a.width;
    const T* gr = dy + r * a.width;
    const float mean = a.saved_mean[r], invstd = a.saved_invstd[r];
    float sum_g = 0.0f, sum_g_xhat = 0.0f;
    for (std::int64_t c = lane; c < a.width; c += 32) {
      const float g = a.gamma[c] * to_float(gr[c]);
      sum_g += g;
      sum_g_xhat = fmaf(g, (to_float(xr[c]) - mean) * invstd, sum_g_xhat);
    }
    const float mean_g = warp_reduce(sum_g, SumOp{}) / width;
    const float mean_g_xhat = warp_reduce(sum_g_xhat, SumOp{}) / width;
    T* dr = dx + r * a.width;
    for (std::int64_t c = lane; c < a.width; c += 32) {
      const float xhat = (to_float(xr[c]) - mean) * invstd;
      const float g = a.gamma[c] * to_float(gr[c]);
      dr[c] = from_float<T>(invstd * (g - mean_g - xhat * mean_g_xhat));
    }
  }
}

// dgamma (k = 0) and dbeta (k = 1) of one element.
template <class T>
struct LayerNormParamGradOp {
  const T* dy;
  const T* x;
  const float* saved_mean;
  const float* saved_invstd;
  std::int64_t width;
  __device__ void accumulate(std::int64_t r, std::int64_t c, float (&acc)[2]) const {
    const std::int64_t i = r * width + c;
    const float g = to_float(dy[i]);
    acc[0] = fmaf(g, (to_float(x[i]) - saved_mean[r]) * saved_invstd[r], acc[0]);
    acc[1] += g;
  }
};

struct LayerNormParamGradFinalize {
  float* dgamma;
  float* dbeta;
  __device__ void operator()(std::int64_t c, const double (&t)[2]) const {
    dgamma[c] = static_cast<float>(t[0]);
    dbeta[c] = static_cast<float>(t[1]);
  }
};

template <class T>
__global__ void softmax_rows_forward(const T* x, T* y, std::int64_t rows, std::int64_t width) {
  const int lane = threadIdx.x & 31;
  PFC_FOR_EACH_WARP_ROW(r, rows) {
    const T* xr = x + r * width;
    float max = -INFINITY;
    for (std::int64_t c = lane; c < width; c += 32) max = max_nan(max, to_float(xr[c]));
    max = warp_reduce(max, MaxOp{});
    float sum = 0.0f;
    for (std::int64_t c = lane; c < width; c += 32) sum += expf(to_float(xr[c]) - max);
    const float inv = 1.0f / warp_reduce(sum, SumOp{});
    T* yr = y + r * width;
    for (std::int64_t c = lane; c < width; c += 32)
      yr[c] = from_float<T>(expf(to_float(xr[c]) - max) * inv);
  }
}

template <class T>
__global__ void softmax_rows_backward(const T* dy, const T* y, T* dx, std::int64_t rows,
                                      std::int64_t width) {
  const int lane = threadIdx.x & 31;
  PFC_FOR_EACH_WARP_ROW(r, rows) {
    const T* gr = dy + r * width;
    const T* yr = y + r * width;
    float dot = 0.0f;
    for (std::int64_t c = lane; c < width; c += 32) dot = fmaf(to_float(gr[c]), to_float(yr[c]), dot);
    dot = warp_reduce(dot, SumOp{});
    T* dr = dx + r * width;
    for (std::int64_t c = lane; c < width; c += 32)
      dr[c] = from_float<T>(to_float(yr[c]) * (to_float(gr[c]) - dot));
  }
}

template <class T>
struct Relu6ForwardOp {
  const T* x;
  T* y;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = v[k] < 0.0f ? 0.0f : (v[k] > 6.0f ? 6.0f : v[k]);
    store_float<N>(y, i, v);
  }
};

template <class T>
struct Relu6BackwardOp {
  const T* dy;
  const T* y;
  T* dx;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float g[N], v[N];
    load_float<N>(dy, i, g);
    load_float<N>(y, i, v);
#pragma unroll
    for (int k = 0; k < N; ++k) g[k] = v[k] > 0.0f && v[k] < 6.0f ? g[k] : 0.0f;
    store_float<N>(dx, i, g);
  }
};

template <class T>
struct ScaleSamplesOp {
  const T* x;
  const float* factor;
  T* y;
  std::int64_t per_sample;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] *= factor[(i + k) / per_sample];
    store_float<N>(y, i, v);
  }
};

#undef PFC_FOR_EACH_WARP_ROW

}  // namespace

void launch_layernorm_forward(const LayerNormForwardArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return;
  dispatch_float(a.dtype, "layernorm_forward", [&](auto tag) {
    using T = decltype(tag);
    layernorm_forward<T><<<row_blocks(a.rows), kWarpsPerBlock * 32, 0, stream>>>(a);
    PFC_CHECK_LAUNCH();
  });
}

std::size_t layernorm_backward_scratch_bytes(std::int64_t rows, std::int64_t width) {
  return channel_reduce_shape(rows, width).scratch_bytes(2);
}

void launch_layernorm_backward(const LayerNormBackwardArgs& a, void* scratch,
                               cudaStream_t stream) {
  const ChannelReduceShape shape = channel_reduce_shape(a.rows, a.width);
  dispatch_float(a.dtype, "layernorm_backward", [&](auto tag) {
    using T = decltype(tag);
    if (a.rows > 0) {
      layernorm_backward_data<T><<<row_blocks(a.rows), kWarpsPerBlock * 32, 0, stream>>>(a);
      PFC_CHECK_LAUNCH();
    }
    launch_channel_reduce<2>(
        shape,
        LayerNormParamGradOp<T>{static_cast<const T*>(a.dy), static_cast<const T*>(a.x),
                                a.saved_mean, a.saved_invstd, a.width},
        LayerNormParamGradFinalize{a.dgamma, a.dbeta}, static_cast<float*>(scratch), stream);
  });
}

void launch_softmax_rows_forward(const void* x, void* y, DType dtype, std::int64_t rows,
                                 std::int64_t width, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch_float(dtype, "softmax_rows_forward", [&](auto tag) {
    using T = decltype(tag);
    softmax_rows_forward<T><<<row_blocks(rows), kWarpsPerBlock * 32, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, width);
    PFC_CHECK_LAUNCH();
  });
}

void launch_softmax_rows_backward(const void* dy, const void* y, void* dx, DType dtype,
                                  std::int64_t rows, std::int64_t width, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch_float(dtype, "softmax_rows_backward", [&](auto tag) {
    using T = decltype(tag);
    softmax_rows_backward<T><<<row_blocks(rows), kWarpsPerBlock * 32, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), rows, width);
    PFC_CHECK_LAUNCH();
  });
}

void launch_relu6_forward(const void* x, void* y, DType dtype, std::int64_t n,
                          cudaStream_t stream) {
  dispatch_float(dtype, "relu6_forward", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(x, sizeof(T) * kPack) && is_aligned(y, sizeof(T) * kPack);
    launch_map(n, packed, Relu6ForwardOp<T>{static_cast<const T*>(x), static_cast<T*>(y)},
               stream);
  });
}

void launch_relu6_backward(const void* dy, const void* y, void* dx, DType dtype, std::int64_t n,
                           cudaStream_t stream) {
  dispatch_float(dtype, "relu6_backward", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(dy, sizeof(T) * kPack) && is_aligned(y, sizeof(T) * kPack) &&
                        is_aligned(dx, sizeof(T) * kPack);
    launch_map(n, packed,
               Relu6BackwardOp<T>{static_cast<const T*>(dy), static_cast<const T*>(y),
                                  static_cast<T*>(dx)},
               stream);
  });
}

void launch_scale_samples(const void* x, const float* factor, void* y, DType dtype,
                          std::int64_t samples, std::int64_t per_sample, cudaStream_t stream) {
  if (per_sample == 0) return;
  dispatch_float(dtype, "scale_samples", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(x, sizeof(T) * kPack) && is_aligned(y, sizeof(T) * kPack);
    launch_map(samples * per_sample, packed,
               ScaleSamplesOp<T>{static_cast<const T*>(x), factor, static_cast<T*>(y), per_sample},
               stream);
  });
}

}  // namespace pfc::cuda
