// The operand checks of every Backend primitive, one function per primitive under the
// primitive's name, shared by the CPU, CUDA and meta backends: each backend calls the one of
// the same name first, with its rules (operand_rules.h), so that the three accept and refuse
// exactly the same calls. A failed check throws pfc::Error naming the primitive, the operand
// and what was expected.
//
// What is not here: checks of values (an index inside its table, a label inside its row),
// which need the data: the CPU backend makes them on the host, CUDA in its kernels, and a meta
// tensor has none. A new Backend primitive gets its function here, called by all three.
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "backend/operand_rules.h"

namespace pfc::operand_check {

struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;  // c [m, n] = op(a) [m, k] * op(b) [k, n]
};

// The per-channel primitives take x [rows, channels] or any NHWC map (channels last), viewed as
// [numel / channels, channels].
struct ChannelRows {
  std::int64_t rows = 0, channels = 0;
};

// ---- data movement ----
void copy(const OperandRules& r, const Tensor& src, const Tensor& dst);
void fill(const OperandRules& r, const Tensor& x);
void fill_normal(const OperandRules& r, const Tensor& x);
void cast(const OperandRules& r, const Tensor& src, const Tensor& dst);

// ---- convolution ----
// x (dy) and w of one type, the result of that type too; or, where the rules take bf16
// products, bf16 operands and an f32 result.
void conv2d_forward(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                    const Tensor& w, const Tensor& y);
void conv2d_backward_data(const OperandRules& r, const Conv2dGeometry& g, const Tensor& dy,
                          const Tensor& w, const Tensor& dx);
// conv2d_forward's operands, w also bf16 beside f32 x; bias and slope [out_channels] of y's
// type.
void conv2d_forward_fused(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                          const Tensor& w, const ConvEpilogue& epilogue, const Tensor& y);
void conv2d_backward_filter(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor& dw);

// ---- batch-norm and PReLU over [rows, channels] (ChannelRows) ----
ChannelRows batchnorm_forward_train(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                                    const Tensor& beta, const Tensor& running_mean,
                                    const Tensor& running_var, const Tensor& y,
                                    const Tensor& saved_mean, const Tensor& saved_invstd);
ChannelRows batchnorm_forward_inference(const OperandRules& r, const Tensor& x,
                                        const Tensor& gamma, const Tensor& beta,
                                        const Tensor& running_mean, const Tensor& running_var,
                                        const Tensor& y);
ChannelRows batchnorm_forward_saved(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                                    const Tensor& beta, const Tensor& saved_mean,
                                    const Tensor& saved_invstd, const Tensor& y);
ChannelRows batchnorm_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                               const Tensor& gamma, const Tensor& saved_mean,
                               const Tensor& saved_invstd, const Tensor& dx, const Tensor& dgamma,
                               const Tensor& dbeta);
ChannelRows prelu_forward(const OperandRules& r, const Tensor& x, const Tensor& slope,
                          const Tensor& y);
ChannelRows prelu_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                           const Tensor& slope, const Tensor& dx, const Tensor& dslope);

// ---- elementwise and reductions ----
void add(const OperandRules& r, const Tensor& a, const Tensor& b, const Tensor& y);
void axpy(const OperandRules& r, const Tensor& x, const Tensor& y);
void scale(const OperandRules& r, const Tensor& x);
void sum_of_squares(const OperandRules& r, const Tensor& x);
void all_finite(const OperandRules& r, const Tensor& x);

// ---- dense algebra ----
GemmDims gemm(const OperandRules& r, bool transpose_a, bool transpose_b, const Tensor& a,
              const Tensor& b, const Tensor& c);
ChannelRows add_row_vector(const OperandRules& r, const Tensor& x, const Tensor& bias);
ChannelRows sum_rows(const OperandRules& r, const Tensor& x, const Tensor& out);

GemmDims batched_gemm(const OperandRules& r, const BatchedGemmGeometry& g, const Tensor& a,
                      const Tensor& b, const Tensor& c);

// ---- transformer pieces: per-row (the last dimension) and per-sample (the first) ----
ChannelRows layernorm_forward(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                              const Tensor& beta, const Tensor& y, const Tensor& saved_mean,
                              const Tensor& saved_invstd);
ChannelRows layernorm_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                               const Tensor& gamma, const Tensor& saved_mean,
                               const Tensor& saved_invstd, const Tensor& dx, const Tensor& dgamma,
                               const Tensor& dbeta);
ChannelRows softmax_rows_forward(const OperandRules& r, const Tensor& x, const Tensor& y);
ChannelRows softmax_rows_backward(const OperandRules& r, const Tensor& dy, const Tensor& y,
                                  const Tensor& dx);
void relu6_forward(const OperandRules& r, const Tensor& x, const Tensor& y);
void relu6_backward(const OperandRules& r, const Tensor& dy, const Tensor& y, const Tensor& dx);
// rows: the samples; channels: the elements of one sample.
ChannelRows scale_samples(const OperandRules& r, const Tensor& x, const Tensor& factor,
                          const Tensor& y);

// ---- PartialFC pieces ----
void l2_normalize_rows(const OperandRules& r, const Tensor& x, const Tensor& y,
                       const Tensor& norms);
void l2_normalize_rows_backward(const OperandRules& r, const Tensor& dy, const Tensor& y,
                                const Tensor& norms, const Tensor& dx);
void gather_rows(const OperandRules& r, const Tensor& src, const Tensor& index, const Tensor& dst);
void scatter_rows(const OperandRules& r, const Tensor& src, const Tensor& index, const Tensor& dst);
void margin_logits(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                   const Tensor& row_max);
void exp_and_row_sum(const OperandRules& r, const Tensor& logits, const Tensor& global_max,
                     const Tensor& row_sum);
void softmax_grad(const OperandRules& r, const Tensor& exp_logits, const Tensor& global_sum,
                  const Tensor& local_label, std::int64_t global_batch, const Tensor& target_prob);
void interclass_filter(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                       const Tensor& keep);
void interclass_filter_backward(const OperandRules& r, const Tensor& grad, const Tensor& keep);
void margin_gradient_factor(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                            const Tensor& factor);
void scale_target_column(const OperandRules& r, const Tensor& grad, const Tensor& local_label,
                         const Tensor& factor);

// ---- optimiser ----
void sgd_update(const OperandRules& r, const Tensor& w, const Tensor& g, const Tensor& m);
void sgd_update_rows(const OperandRules& r, const Tensor& w, const Tensor& m, const Tensor& index,
                     const Tensor& g);
void adamw_update(const OperandRules& r, const Tensor& w, const Tensor& g, const Tensor& m,
                  const Tensor& v);
void adamw_update_rows(const OperandRules& r, const Tensor& w, const Tensor& m, const Tensor& v,
                       const Tensor& index, const Tensor& g);
void sgd_update_sparse_grad(const OperandRules& r, const Tensor& w, const Tensor& m,
                            const Tensor& index, const Tensor& g);
void adamw_update_sparse_grad(const OperandRules& r, const Tensor& w, const Tensor& m,
                              const Tensor& v, const Tensor& index, const Tensor& g);

}  // namespace pfc::operand_check
