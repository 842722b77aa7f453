// CPU batch-norm in training and inference mode over x [rows, channels] (NHWC activations
// viewed per channel), and a training forward's output recomputed from its saved statistics.
// f32 activations take the vectorised block passes of cpu_channel_passes_f32.h; the loops here
// are the f64 path and their oracle. Statistics are combined in double; parameters and
// statistics are f32 or, in an f64 run and the f64 gradient checks, the activation type. On the
// OpenMP threads: the reference's per-channel sums split the channels (each sum keeps its
// order: the same bits on any number of threads), the per-element passes split the rows.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_channel_passes_f32.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// Rows per thread below which a per-element pass stays on one thread.
std::int64_t rows_grain(std::int64_t channels) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(channels, 1));
}

// Calls sums(c0, c1) for ranges of channels, one per thread, when there is enough work.
template <class Sums>
void over_channels(std::int64_t rows, std::int64_t channels, const Sums& sums) {
  const std::int64_t grain = rows >= kElementGrain ? 1 : channels;
  parallel_for(channels, grain, sums);
}

// y = x * a + b per channel, with a = gamma * invstd and b = beta - mean * a: one rounding of
// the two per-channel factors instead of four per element.
template <class T, class P>
void normalise(std::int64_t rows, std::int64_t channels, const T* x, const P* gamma,
               const P* beta, const std::vector<double>& mean, const std::vector<double>& invstd,
               T* y) {
  std::vector<T> a(channels), b(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    a[c] = static_cast<T>(gamma[c] * invstd[c]);
    b[c] = static_cast<T>(beta[c] - mean[c] * gamma[c] * invstd[c]);
  }
  if constexpr (std::is_same_v<T, float>) {
    cpu::f32_scale_shift(rows, channels, x, a.data(), b.data(), y);
    return;
  }
  parallel_for(rows, rows_grain(channels), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* xr = x + r * channels;
      T* yr = y + r * channels;
      for (std::int64_t c = 0; c < channels; ++c) yr[c] = xr[c] * a[c] + b[c];
    }
  });
}

template <class T, class P>
void forward_train(std::int64_t rows, std::int64_t channels, const T* x, const P* gamma,
                   const P* beta, P* running_mean, P* running_var, double momentum, double eps,
                   T* y, P* saved_mean, P* saved_invstd) {
  std::vector<double> sum(channels, 0.0), mean(channels), invstd(channels);
  // Two passes: the centred sum of squares does not cancel as E[x^2] - E[x]^2 would.
  std::vector<double> sq(channels, 0.0);
  if constexpr (std::is_same_v<T, float>) {
    cpu::ChannelMoments m = cpu::f32_channel_moments(rows, channels, x);
    mean = std::move(m.mean);
    sq = std::move(m.squared_deviations);
  } else {
    over_channels(rows, channels, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * channels;
        for (std::int64_t c = c0; c < c1; ++c) sum[c] += xr[c];
      }
      for (std::int64_t c = c0; c < c1; ++c) mean[c] = sum[c] / rows;
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * channels;
        for (std::int64_t c = c0; c < c1; ++c) {
          const double v = xr[c] - mean[c];
          sq[c] += v * v;
        }
      }
    });
  }
  for (std::int64_t c = 0; c < channels; ++c) {
    const double biased = sq[c] / rows;
    const double unbiased = sq[c] / (rows - 1);
    invstd[c] = 1.0 / std::sqrt(biased + eps);
    saved_mean[c] = static_cast<P>(mean[c]);
    saved_invstd[c] = static_cast<P>(invstd[c]);
    running_mean[c] = static_cast<P>((1.0 - momentum) * running_mean[c] + momentum * mean[c]);
    running_var[c] = static_cast<P>((1.0 - momentum) * running_var[c] + momentum * unbiased);
  }
  normalise(rows, channels, x, gamma, beta, mean, invstd, y);
}

template <class T, class P>
void forward_inference(std::int64_t rows, std::int64_t channels, const T* x, const P* gamma,
                       const P* beta, const P* running_mean, const P* running_var, double eps,
                       T* y) {
  std::vector<double> mean(channels), invstd(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    mean[c] = running_mean[c];
    invstd[c] = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + eps);
  }
  normalise(rows, channels, x, gamma, beta, mean, invstd, y);
}

template <class T, class P>
void forward_saved(std::int64_t rows, std::int64_t channels, const T* x, const P* gamma,
                   const P* beta, const P* saved_mean, const P* saved_invstd, T* y) {
  const std::vector<double> mean(saved_mean, saved_mean + channels);
  const std::vector<double> invstd(saved_invstd, saved_invstd + channels);
  normalise(rows, channels, x, gamma, beta, mean, invstd, y);
}

// dbeta = sum dy, dgamma = sum dy * xhat,
// dx = gamma * invstd * (dy - dbeta / rows - xhat * dgamma / rows).
template <class T, class P>
void backward(std::int64_t rows, std::int64_t channels, const T* dy, const T* x, const P* gamma,
              const P* saved_mean, const P* saved_invstd, T* dx, P* dgamma, P* dbeta) {
  std::vector<double> sum_dy(channels, 0.0), sum_dy_xhat(channels, 0.0);
  if constexpr (std::is_same_v<T, float>) {
    cpu::f32_batchnorm_backward_sums(rows, channels, dy, x, saved_mean, saved_invstd,
                                     sum_dy.data(), sum_dy_xhat.data());
  } else {
    over_channels(rows, channels, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* dyr = dy + r * channels;
        const T* xr = x + r * channels;
        for (std::int64_t c = c0; c < c1; ++c) {
          const double xhat = (static_cast<double>(xr[c]) - saved_mean[c]) * saved_invstd[c];
          sum_dy[c] += dyr[c];
          sum_dy_xhat[c] += dyr[c] * xhat;
        }
      }
    });
  }
  std::vector<double> k(channels), mean_dy(channels), mean_dy_xhat(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    dbeta[c] = static_cast<P>(sum_dy[c]);
    dgamma[c] = static_cast<P>(sum_dy_xhat[c]);
    k[c] = static_cast<double>(gamma[c]) * saved_invstd[c];
    mean_dy[c] = sum_dy[c] / rows;
    mean_dy_xhat[c] = sum_dy_xhat[c] / rows;
  }
  if constexpr (std::is_same_v<T, float>) {
    // dy - mean_dy is taken first: the two nearly cancel, and in that order the result is
    // within a few f32 ulps of the f64 reference's.
    const std::vector<float> kf(k.begin(), k.end()), mf(mean_dy.begin(), mean_dy.end());
    const std::vector<float> mxf(mean_dy_xhat.begin(), mean_dy_xhat.end());
    cpu::f32_batchnorm_backward_dx(rows, channels, dy, x, saved_mean, saved_invstd, kf.data(),
                                   mf.data(), mxf.data(), dx);
    return;
  }
  // The three terms of dx nearly cancel; combining them in double keeps the rounding of the
  // result at one ulp, so errors do not compound from layer to layer.
  parallel_for(rows, rows_grain(channels), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* dyr = dy + r * channels;
      const T* xr = x + r * channels;
      T* dxr = dx + r * channels;
      for (std::int64_t c = 0; c < channels; ++c) {
        const double xhat = (static_cast<double>(xr[c]) - saved_mean[c]) * saved_invstd[c];
        dxr[c] = static_cast<T>(k[c] * (dyr[c] - mean_dy[c] - xhat * mean_dy_xhat[c]));
      }
    }
  });
}

// Calls f(T{}, P{}) with x's activation type T and gamma's parameter type P.
template <class F>
void dispatch_types(const Tensor& x, const Tensor& gamma, const char* op, F&& f) {
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    cpu::dispatch_param<decltype(xt)>(gamma.dtype(), op, "gamma", [&](auto pt) { f(xt, pt); });
  });
}

}  // namespace

void CpuBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         Tensor& running_mean, Tensor& running_var, double momentum,
                                         double eps, Tensor& y, Tensor& saved_mean,
                                         Tensor& saved_invstd) {
  const char* op = "batchnorm_forward_train";
  const auto [rows, channels] = operand_check::batchnorm_forward_train(
      rules_, x, gamma, beta, running_mean, running_var, y, saved_mean, saved_invstd);
  dispatch_types(x, gamma, op, [&](auto xt, auto pt) {
    using T = decltype(xt);
    using P = decltype(pt);
    forward_train(rows, channels, x.data<T>(), gamma.data<P>(), beta.data<P>(),
                  running_mean.data<P>(), running_var.data<P>(), momentum, eps, y.data<T>(),
                  saved_mean.data<P>(), saved_invstd.data<P>());
  });
}

void CpuBackend::batchnorm_forward_inference(const Tensor& x, const Tensor& gamma,
                                             const Tensor& beta, const Tensor& running_mean,
                                             const Tensor& running_var, double eps, Tensor& y) {
  const char* op = "batchnorm_forward_inference";
  const auto [rows, channels] = operand_check::batchnorm_forward_inference(
      rules_, x, gamma, beta, running_mean, running_var, y);
  dispatch_types(x, gamma, op, [&](auto xt, auto pt) {
    using T = decltype(xt);
    using P = decltype(pt);
    forward_inference(rows, channels, x.data<T>(), gamma.data<P>(), beta.data<P>(),
                      running_mean.data<P>(), running_var.data<P>(), eps, y.data<T>());
  });
}

void CpuBackend::batchnorm_forward_saved(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         const Tensor& saved_mean, const Tensor& saved_invstd,
                                         Tensor& y) {
  const char* op = "batchnorm_forward_saved";
  const auto [rows, channels] = operand_check::batchnorm_forward_saved(
      rules_, x, gamma, beta, saved_mean, saved_invstd, y);
  dispatch_types(x, gamma, op, [&](auto xt, auto pt) {
    using T = decltype(xt);
    using P = decltype(pt);
    forward_saved(rows, channels, x.data<T>(), gamma.data<P>(), beta.data<P>(),
                  saved_mean.data<P>(), saved_invstd.data<P>(), y.data<T>());
  });
}

void CpuBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& saved_mean, const Tensor& saved_invstd,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const char* op = "batchnorm_backward";
  const auto [rows, channels] = operand_check::batchnorm_backward(
      rules_, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma, dbeta);
  dispatch_types(x, gamma, op, [&](auto xt, auto pt) {
    using T = decltype(xt);
    using P = decltype(pt);
    backward(rows, channels, dy.data<T>(), x.data<T>(), gamma.data<P>(), saved_mean.data<P>(),
             saved_invstd.data<P>(), dx.data<T>(), dgamma.data<P>(), dbeta.data<P>());
  });
}

}  // namespace pfc
