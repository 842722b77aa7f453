#include "backend/cpu/cpu_channel_passes_f32.h"

#include <algorithm>

#include "backend/cpu/cpu_runtime.h"
#include "backend/cpu/isa_clones.h"
#include "core/parallel_for.h"

namespace pfc::cpu {
namespace {

// 64 KiB of f32 per block: the two passes of a block's moments read it from cache.
constexpr std::int64_t kBlockElements = 16384;

struct Blocks {
  std::int64_t rows = 0, rows_per_block = 1, count = 0;
  std::int64_t first_row(std::int64_t k) const { return k * rows_per_block; }
  std::int64_t rows_of(std::int64_t k) const {
    return std::min(rows, first_row(k) + rows_per_block) - first_row(k);
  }
};

Blocks blocks_of(std::int64_t rows, std::int64_t channels) {
  Blocks b;
  b.rows = rows;
  b.rows_per_block = std::max<std::int64_t>(1, kBlockElements / std::max<std::int64_t>(channels, 1));
  b.count = (rows + b.rows_per_block - 1) / b.rows_per_block;
  return b;
}

// Calls body(block, first_row, rows) for every block, the blocks split over the threads.
template <class Body>
void over_blocks(const Blocks& b, const Body& body) {
  parallel_for(b.count, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t k = first; k < last; ++k) body(k, b.first_row(k), b.rows_of(k));
  });
}

PFC_ISA_CLONES
void block_moments(const float* __restrict x, std::int64_t rows, std::int64_t channels,
                   float* __restrict mean, float* __restrict squared_deviations) {
  std::fill(mean, mean + channels, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) mean[c] += x[r * channels + c];
  const float inverse = 1.0f / static_cast<float>(rows);
  for (std::int64_t c = 0; c < channels; ++c) mean[c] *= inverse;
  std::fill(squared_deviations, squared_deviations + channels, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const float v = x[r * channels + c] - mean[c];
      squared_deviations[c] += v * v;
    }
}

PFC_ISA_CLONES
void block_scale_shift(const float* x, std::int64_t rows, std::int64_t channels,
                       const float* __restrict a, const float* __restrict b, float* y) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c)
      y[r * channels + c] = x[r * channels + c] * a[c] + b[c];
}

PFC_ISA_CLONES
void block_backward_sums(const float* __restrict dy, const float* __restrict x,
                         std::int64_t rows, std::int64_t channels, const float* __restrict mean,
                         const float* __restrict invstd, float* __restrict sum_dy,
                         float* __restrict sum_dy_xhat) {
  std::fill(sum_dy, sum_dy + channels, 0.0f);
  std::fill(sum_dy_xhat, sum_dy_xhat + channels, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const float g = dy[r * channels + c];
      sum_dy[c] += g;
      sum_dy_xhat[c] += g * ((x[r * channels + c] - mean[c]) * invstd[c]);
    }
}

PFC_ISA_CLONES
void block_backward_dx(const float* __restrict dy, const float* __restrict x, std::int64_t rows,
                       std::int64_t channels, const float* __restrict mean,
                       const float* __restrict invstd, const float* __restrict k,
                       const float* __restrict mean_dy, const float* __restrict mean_dy_xhat,
                       float* __restrict dx) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t i = r * channels + c;
      const float xhat = (x[i] - mean[c]) * invstd[c];
      dx[i] = k[c] * ((dy[i] - mean_dy[c]) - xhat * mean_dy_xhat[c]);
    }
}

PFC_ISA_CLONES
void block_prelu_forward(const float* x, std::int64_t rows, std::int64_t channels,
                         const float* __restrict slope, float* y) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const float v = x[r * channels + c];
      y[r * channels + c] = v > 0.0f ? v : slope[c] * v;
    }
}

PFC_ISA_CLONES
void block_prelu_backward(const float* __restrict dy, const float* __restrict x,
                          std::int64_t rows, std::int64_t channels,
                          const float* __restrict slope, float* __restrict dx,
                          float* __restrict dslope) {
  std::fill(dslope, dslope + channels, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t i = r * channels + c;
      const bool positive = x[i] > 0.0f;
      dx[i] = positive ? dy[i] : slope[c] * dy[i];
      dslope[c] += positive ? 0.0f : dy[i] * x[i];
    }
}

// Adds the blocks' per-channel partial sums [count, channels] in block order, in f64.
void add_in_order(const std::vector<float>& partial, std::int64_t count, std::int64_t channels,
                  double* total) {
  std::fill(total, total + channels, 0.0);
  for (std::int64_t k = 0; k < count; ++k)
    for (std::int64_t c = 0; c < channels; ++c) total[c] += partial[k * channels + c];
}

}  // namespace

// The same tests, in the same order, as the loader's choice among the clones.
const char* channel_passes_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "AVX-512";
  if (__builtin_cpu_supports("x86-64-v3")) return "AVX2";
  return "SSE2";
#else
  return "the compiler's baseline";
#endif
}

ChannelMoments f32_channel_moments(std::int64_t rows, std::int64_t channels, const float* x) {
  const Blocks b = blocks_of(rows, channels);
  std::vector<float> means(b.count * channels), deviations(b.count * channels);
  over_blocks(b, [&](std::int64_t k, std::int64_t first, std::int64_t n) {
    block_moments(x + first * channels, n, channels, &means[k * channels],
                  &deviations[k * channels]);
  });
  // Chan, Golub and LeVeque's pairwise update, block after block: each block's mean and
  // squared deviations join the running ones with the correction for the means' difference.
  ChannelMoments m{std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  double seen = 0.0;
  for (std::int64_t k = 0; k < b.count; ++k) {
    const double n = static_cast<double>(b.rows_of(k)), total = seen + n;
    for (std::int64_t c = 0; c < channels; ++c) {
      const double delta = means[k * channels + c] - m.mean[c];
      m.mean[c] += delta * n / total;
      m.squared_deviations[c] += deviations[k * channels + c] + delta * delta * seen * n / total;
    }
    seen = total;
  }
  return m;
}

void f32_scale_shift(std::int64_t rows, std::int64_t channels, const float* x, const float* a,
                     const float* b, float* y) {
  over_blocks(blocks_of(rows, channels), [&](std::int64_t, std::int64_t first, std::int64_t n) {
    block_scale_shift(x + first * channels, n, channels, a, b, y + first * channels);
  });
}

void f32_batchnorm_backward_sums(std::int64_t rows, std::int64_t channels, const float* dy,
                                 const float* x, const float* mean, const float* invstd,
                                 double* sum_dy, double* sum_dy_xhat) {
  const Blocks b = blocks_of(rows, channels);
  std::vector<float> partial_dy(b.count * channels), partial_dy_xhat(b.count * channels);
  over_blocks(b, [&](std::int64_t k, std::int64_t first, std::int64_t n) {
    block_backward_sums(dy + first * channels, x + first * channels, n, channels, mean, invstd,
                        &partial_dy[k * channels], &partial_dy_xhat[k * channels]);
  });
  add_in_order(partial_dy, b.count, channels, sum_dy);
  add_in_order(partial_dy_xhat, b.count, channels, sum_dy_xhat);
}

void f32_batchnorm_backward_dx(std::int64_t rows, std::int64_t channels, const float* dy,
                               const float* x, const float* mean, const float* invstd,
                               const float* k, const float* mean_dy, const float* mean_dy_xhat,
                               float* dx) {
  over_blocks(blocks_of(rows, channels), [&](std::int64_t, std::int64_t first, std::int64_t n) {
    block_backward_dx(dy + first * channels, x + first * channels, n, channels, mean, invstd, k,
                      mean_dy, mean_dy_xhat, dx + first * channels);
  });
}

void f32_prelu_forward(std::int64_t rows, std::int64_t channels, const float* x,
                       const float* slope, float* y) {
  over_blocks(blocks_of(rows, channels), [&](std::int64_t, std::int64_t first, std::int64_t n) {
    block_prelu_forward(x + first * channels, n, channels, slope, y + first * channels);
  });
}

void f32_prelu_backward(std::int64_t rows, std::int64_t channels, const float* dy, const float* x,
                        const float* slope, float* dx, double* dslope) {
  const Blocks b = blocks_of(rows, channels);
  std::vector<float> partial(b.count * channels);
  over_blocks(b, [&](std::int64_t k, std::int64_t first, std::int64_t n) {
    block_prelu_backward(dy + first * channels, x + first * channels, n, channels, slope,
                         dx + first * channels, &partial[k * channels]);
  });
  add_in_order(partial, b.count, channels, dslope);
}

}  // namespace pfc::cpu
