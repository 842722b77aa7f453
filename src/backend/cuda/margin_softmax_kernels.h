// Launchers for the PartialFC margin softmax on logits [batch, classes] of this rank's shard
// (margin_softmax_kernels.cu), each fused into one pass over the logits plus a small fold:
// margin + clamp + scale with the row max, exp with the row sum, and normalise + gradient;
// and the two one-element-per-row steps of the exact margin gradient.
// Logits f16 or f32; labels i64 (-1: target not in this shard); per-row values f32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace pfc::cuda {

struct MarginConstants {
  double m1 = 1.0, m2 = 0.5, m3 = 0.0, scale = 64.0;
};

// Scratch for the per-block partial maxima / sums.
std::size_t margin_softmax_scratch_bytes(std::int64_t batch, std::int64_t classes);

// In place: cos_logits := scale * (clamped cos, or cos(m1 acos(cos) + m2) - m3 at the label);
// row_max[b] = max of row b. A label outside [-1, classes) records `code` in *error_flag.
void launch_margin_logits(void* cos_logits, DType dtype, std::int64_t batch, std::int64_t classes,
                          const std::int64_t* label, const MarginConstants& m, float* row_max,
                          void* scratch, int* error_flag, int code, cudaStream_t stream);

// In place: logits := exp(logits - global_max[b]); row_sum[b] = sum of the stored row.
void launch_exp_and_row_sum(void* logits, DType dtype, std::int64_t batch, std::int64_t classes,
                            const float* global_max, float* row_sum, void* scratch,
                            cudaStream_t stream);

// In place: p := exp / global_sum[b]; target_prob[b] = p at the label (0 when -1);
// then p := scale * (p - onehot) / global_batch.
void launch_softmax_grad(void* exp_logits, DType dtype, std::int64_t batch, std::int64_t classes,
                         const float* global_sum, const std::int64_t* label, double scale,
                         std::int64_t global_batch, float* target_prob, int* error_flag, int code,
                         cudaStream_t stream);

// The exact margin gradient: factor[b] = margin_derivative(clamp(cos[b, label[b]], -1, 1))
// (backend/margin_derivative.h; 1 where the label is -1), read before the margin overwrites
// the cosines. A label outside [-1, classes) records `code` in *error_flag.
void launch_margin_gradient_factor(const void* cos, DType dtype, std::int64_t batch,
                                   std::int64_t classes, const std::int64_t* label,
                                   const MarginConstants& m, float* factor, int* error_flag,
                                   int code, cudaStream_t stream);

// grad[b, label[b]] *= factor[b] where the label is not -1.
void launch_scale_target_column(void* grad, DType dtype, std::int64_t batch, std::int64_t classes,
                                const std::int64_t* label, const float* factor, int* error_flag,
                                int code, cudaStream_t stream);

}  // namespace pfc::cuda
