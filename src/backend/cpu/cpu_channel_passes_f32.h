// The f32 passes of batch-norm and PReLU over NHWC activations viewed as x [rows, channels],
// vectorised for the CPU pfc runs on (AVX-512, AVX2 or SSE2, chosen at run time) and on the
// OpenMP threads. The rows are cut into blocks whose size depends on the shape alone; each
// block's per-channel sums are taken in f32 (a few hundred terms, in cache) and the blocks are
// combined in f64 in block order. So the bits are the same on any number of threads, and
// the statistics are as accurate as the f64 reference loops' to a few f32 ulps, at the speed
// of memory. The reference loops beside the callers (cpu_batchnorm.cpp, cpu_prelu.cpp) run f64
// and are these passes' oracle (cpu_channel_passes_test).
//
// Measured at iresnet's largest batch-norm shape (32 x 112 x 112 x 64, 2 threads): the
// moments and normalisation 14 ms, oneDNN 2.6's batch-norm forward 15 ms, the f64-accumulating
// reference 55 ms.
#pragma once

#include <cstdint>
#include <vector>

namespace pfc::cpu {

// Per channel: the mean, and the sum of squared deviations from it.
struct ChannelMoments {
  std::vector<double> mean, squared_deviations;
};
ChannelMoments f32_channel_moments(std::int64_t rows, std::int64_t channels, const float* x);

// y = x * a + b per channel (y may be x).
void f32_scale_shift(std::int64_t rows, std::int64_t channels, const float* x, const float* a,
                     const float* b, float* y);

// Per channel: sum dy and sum dy * xhat, xhat = (x - mean) * invstd.
void f32_batchnorm_backward_sums(std::int64_t rows, std::int64_t channels, const float* dy,
                                 const float* x, const float* mean, const float* invstd,
                                 double* sum_dy, double* sum_dy_xhat);

// dx = k * (dy - mean_dy - xhat * mean_dy_xhat) per channel.
void f32_batchnorm_backward_dx(std::int64_t rows, std::int64_t channels, const float* dy,
                               const float* x, const float* mean, const float* invstd,
                               const float* k, const float* mean_dy, const float* mean_dy_xhat,
                               float* dx);

// y = x > 0 ? x : slope * x (y may be x).
void f32_prelu_forward(std::int64_t rows, std::int64_t channels, const float* x,
                       const float* slope, float* y);

// dx = x > 0 ? dy : slope * dy; dslope = sum over x <= 0 of dy * x.
void f32_prelu_backward(std::int64_t rows, std::int64_t channels, const float* dy, const float* x,
                        const float* slope, float* dx, double* dslope);

}  // namespace pfc::cpu
