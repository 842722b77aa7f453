// Batch-norm over x [rows, channels], in training mode and in inference mode. CPU reference:
// src/backend/cpu/cpu_batchnorm.cpp, which this must match:
// biased batch variance for normalising, unbiased for running_var, invstd = 1/sqrt(var + eps),
// dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)); inference normalises with
// running_mean and invstd = 1/sqrt(running_var + eps).
//
// Statistics are sums of (x - x[0, c]) and its square: shifting by a sample of the channel
// keeps the f32 sums free of the cancellation that E[x^2] - E[x]^2 suffers when |mean| >> std.
#include <cmath>

#include "backend/cuda/channel_reduce.cuh"
#include "backend/cuda/norm_kernels.h"

namespace pfc::cuda {

namespace {

template <class T>
struct StatsOp {
  const T* x;
  std::int64_t channels;
  __device__ void accumulate(std::int64_t r, std::int64_t c, float (&acc)[2]) const {
    const float v = to_float(x[r * channels + c]) - to_float(x[c]);
    acc[0] += v;
    acc[1] = fmaf(v, v, acc[1]);
  }
};

template <class T>
struct StatsFinalize {
  const T* x;
  std::int64_t rows;
  float* running_mean;
  float* running_var;
  float* saved_mean;
  float* saved_invstd;
  double momentum, eps;
  __device__ void operator()(std::int64_t c, const double (&t)[2]) const {
    const double n = static_cast<double>(rows);
    const double shifted_mean = t[0] / n;
    const double mean = static_cast<double>(to_float(x[c])) + shifted_mean;
    const double var = fmax(t[1] / n - shifted_mean * shifted_mean, 0.0);
    const double unbiased = rows > 1 ? var * n / (n - 1.0) : var;
    saved_mean[c] = static_cast<float>(mean);
    saved_invstd[c] = static_cast<float>(1.0 / sqrt(var + eps));
    running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * mean);
    running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * unbiased);
  }
};

template <class T>
struct NormalizeOp {
  const T* x;
  T* y;
  const float* mean;
  const float* invstd;
  const float* gamma;
  const float* beta;
  std::int64_t channels;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float v[N];
    load_float<N>(x, i, v);
    std::int64_t c = i % channels;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      v[k] = (v[k] - mean[c]) * invstd[c] * gamma[c] + beta[c];
      if (++c == channels) c = 0;
    }
    store_float<N>(y, i, v);
  }
};

// invstd[c] = 1 / sqrt(var[c] + eps), in double as the training statistics are finalised.
struct InverseStdOp {
  const float* var;
  float* invstd;
  double eps;
  template <int N>
  __device__ void run(std::int64_t i) const {
#pragma unroll
    for (int k = 0; k < N; ++k)
      invstd[i + k] = static_cast<float>(1.0 / sqrt(static_cast<double>(var[i + k]) + eps));
  }
};

template <class T>
struct GradSumsOp {
  const T* dy;
  const T* x;
  const float* mean;
  const float* invstd;
  std::int64_t channels;
  __device__ void accumulate(std::int64_t r, std::int64_t c, float (&acc)[2]) const {
    const std::int64_t i = r * channels + c;
    const float g = to_float(dy[i]);
    const float xhat = (to_float(x[i]) - mean[c]) * invstd[c];
    acc[0] += g;
    acc[1] = fmaf(g, xhat, acc[1]);
  }
};

// Writes dgamma, dbeta and the two per-channel means the dx pass needs.
struct GradSumsFinalize {
  std::int64_t rows;
  float* dgamma;
  float* dbeta;
  float* mean_dy;
  float* mean_dy_xhat;
  __device__ void operator()(std::int64_t c, const double (&t)[2]) const {
    dbeta[c] = static_cast<float>(t[0]);
    dgamma[c] = static_cast<float>(t[1]);
    mean_dy[c] = static_cast<float>(t[0] / static_cast<double>(rows));
    mean_dy_xhat[c] = static_cast<float>(t[1] / static_cast<double>(rows));
  }
};

template <class T>
struct InputGradOp {
  const T* dy;
  const T* x;
  T* dx;
  const float* gamma;
  const float* mean;
  const float* invstd;
  const float* mean_dy;
  const float* mean_dy_xhat;
  std::int64_t channels;
  template <int N>
  __device__ void run(std::int64_t i) const {
    float g[N], v[N];
    load_float<N>(dy, i, g);
    load_float<N>(x, i, v);
    std::int64_t c = i % channels;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float xhat = (v[k] - mean[c]) * invstd[c];
      v[k] = gamma[c] * invstd[c] * (g[k] - mean_dy[c] - xhat * mean_dy_xhat[c]);
      if (++c == channels) c = 0;
    }
    store_float<N>(dx, i, v);
  }
};

}  // namespace

std::size_t batchnorm_forward_scratch_bytes(std::int64_t rows, std::int64_t channels) {
  return channel_reduce_shape(rows, channels).scratch_bytes(2);
}

void launch_batchnorm_forward_train(const BatchNormForwardArgs& a, void* scratch,
                                    cudaStream_t stream) {
  const ChannelReduceShape shape = channel_reduce_shape(a.rows, a.channels);
  dispatch_float(a.dtype, "batchnorm_forward_train", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    launch_channel_reduce<2>(shape, StatsOp<T>{x, a.channels},
                             StatsFinalize<T>{x, a.rows, a.running_mean, a.running_var,
                                              a.saved_mean, a.saved_invstd, a.momentum, a.eps},
                             static_cast<float*>(scratch), stream);
    const bool packed = is_aligned(a.x, sizeof(T) * kPack) && is_aligned(a.y, sizeof(T) * kPack);
    launch_map(a.rows * a.channels, packed,
               NormalizeOp<T>{x, static_cast<T*>(a.y), a.saved_mean, a.saved_invstd, a.gamma,
                              a.beta, a.channels},
               stream);
  });
}

void launch_batchnorm_forward_saved(const BatchNormSavedArgs& a, cudaStream_t stream) {
  dispatch_float(a.dtype, "batchnorm_forward_saved", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(a.x, sizeof(T) * kPack) && is_aligned(a.y, sizeof(T) * kPack);
    // The very operation of the training forward's second pass.
    launch_map(a.rows * a.channels, packed,
               NormalizeOp<T>{static_cast<const T*>(a.x), static_cast<T*>(a.y), a.saved_mean,
                              a.saved_invstd, a.gamma, a.beta, a.channels},
               stream);
  });
}

std::size_t batchnorm_inference_scratch_bytes(std::int64_t channels) {
  return static_cast<std::size_t>(channels) * sizeof(float);
}

void launch_batchnorm_forward_inference(const BatchNormInferenceArgs& a, void* scratch,
                                        cudaStream_t stream) {
  float* invstd = static_cast<float*>(scratch);
  launch_map(a.channels, false, InverseStdOp{a.running_var, invstd, a.eps}, stream);
  dispatch_float(a.dtype, "batchnorm_forward_inference", [&](auto tag) {
    using T = decltype(tag);
    const bool packed = is_aligned(a.x, sizeof(T) * kPack) && is_aligned(a.y, sizeof(T) * kPack);
    launch_map(a.rows * a.channels, packed,
               NormalizeOp<T>{static_cast<const T*>(a.x), static_cast<T*>(a.y), a.running_mean,
                              invstd, a.gamma, a.beta, a.channels},
               stream);
  });
}

std::size_t batchnorm_backward_scratch_bytes(std::int64_t rows, std::int64_t channels) {
  // The partial sums, then mean(dy) and mean(dy * xhat) per channel.
  return channel_reduce_shape(rows, channels).scratch_bytes(2) +
         2 * static_cast<std::size_t>(channels) * sizeof(float);
}

void launch_batchnorm_backward(const BatchNormBackwardArgs& a, void* scratch, cudaStream_t stream) {
  const ChannelReduceShape shape = channel_reduce_shape(a.rows, a.channels);
  float* partial = static_cast<float*>(scratch);
  float* mean_dy = partial + shape.scratch_bytes(2) / sizeof(float);
  float* mean_dy_xhat = mean_dy + a.channels;
  dispatch_float(a.dtype, "batchnorm_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = static_cast<const T*>(a.dy);
    const T* x = static_cast<const T*>(a.x);
    launch_channel_reduce<2>(shape, GradSumsOp<T>{dy, x, a.saved_mean, a.saved_invstd, a.channels},
                             GradSumsFinalize{a.rows, a.dgamma, a.dbeta, mean_dy, mean_dy_xhat},
                             partial, stream);
    const bool packed = is_aligned(a.dy, sizeof(T) * kPack) && is_aligned(a.x, sizeof(T) * kPack) &&
                        is_aligned(a.dx, sizeof(T) * kPack);
    launch_map(a.rows * a.channels, packed,
               InputGradOp<T>{dy, x, static_cast<T*>(a.dx), a.gamma, a.saved_mean, a.saved_invstd,
                              mean_dy, mean_dy_xhat, a.channels},
               stream);
  });
}

}  // namespace pfc::cuda
