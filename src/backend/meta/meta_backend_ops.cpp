// MetaBackend's compute primitives: each checks its operands by the planned backend's rules,
// then counts what it would cost. The operation counts are hand counts of the CPU reference
// loops, per output element (a multiply-add is 2; a comparison, select or exp is 1); the bytes
// are every operand read once and every output written once. Convolutions and GEMMs: 2 per
// multiply-add, on tensor cores when their operands are f16.
#include <initializer_list>

#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "backend/operand_checks.h"

namespace pfc {

namespace {

// Operations per element of the primitives that are not convolutions or GEMMs.
constexpr double kBatchNormForwardOps = 6;     // sum; centred square (sub, mul, add); x*a + b
constexpr double kBatchNormInferenceOps = 2;   // x*a + b (a, b per channel)
constexpr double kBatchNormSavedOps = 4;       // (x - mean) * invstd * gamma + beta
constexpr double kBatchNormBackwardOps = 11;   // xhat twice (2 x sub, mul); two sums (add;
                                               // mul, add); dx = k*(dy - m - xhat*n) (4)
constexpr double kPreluForwardOps = 1;         // select, or one multiply
constexpr double kPreluBackwardOps = 3;        // dx (mul); dslope (mul, add)
constexpr double kSgdOps = 6;                  // g + wd*w; mu*m + g'; w - lr*m
constexpr double kAdamWOps = 13;               // w*decay; m (mul, mul, add); v (mul, mul, mul,
                                               // add); sqrt, div, add eps, div, mul, sub
constexpr double kL2NormalizeOps = 3;          // square-add; scale
constexpr double kL2NormalizeBackwardOps = 5;  // dot (mul, add); (dy - y*p)*inv (mul, sub, mul)
constexpr double kMarginLogitsOps = 3;         // clamp; scale; row max
constexpr double kExpRowSumOps = 3;            // sub; exp; add
constexpr double kSoftmaxGradOps = 2;          // 1/sum; scale
constexpr double kFilterOps = 2;               // compare; select
constexpr double kFilterBackwardOps = 1;       // select
constexpr double kMarginFactorOps = 8;         // clamp; acos; m1*t + m2; sin; (1-c)(1+c);
                                               // sqrt; divide; times m1
constexpr double kScaleTargetOps = 1;          // one multiply

double numel(const Tensor& t) { return static_cast<double>(t.numel()); }

// The bytes of one element of each tensor together (a row update moves one of each per
// gradient element, whatever type each is stored in).
double row_element_bytes(std::initializer_list<const Tensor*> tensors) {
  double sum = 0;
  for (const Tensor* t : tensors) sum += static_cast<double>(dtype_size(t->dtype()));
  return sum;
}

// 2 * output pixels * output channels * K*K*C/groups (an output channel reads its group's
// inputs only): every direction does the same multiply-adds.
double conv_flops(const Conv2dGeometry& g) {
  return 2.0 * static_cast<double>(g.batch * g.out_h() * g.out_w() * g.out_channels) *
         static_cast<double>(g.kernel * g.kernel * g.in_per_group());
}

}  // namespace

void MetaBackend::conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                 Tensor& y) {
  operand_check::conv2d_forward(rules_, g, x, w, y);
  const double f = conv_flops(g);
  count_products("conv2d_forward", f, x.dtype(), bytes({&x, &w}), bytes({&y}));
  note_host_scratch(conv2d_host_scratch_bytes(g, x.dtype(), cpu::ConvDirection::forward));
  hold_workspace(conv2d_workspace_bytes(g, x.dtype(), cpu::ConvDirection::forward));
}

void MetaBackend::conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                       Tensor& dx) {
  operand_check::conv2d_backward_data(rules_, g, dy, w, dx);
  const double f = conv_flops(g);
  count_products("conv2d_backward_data", f, dy.dtype(), bytes({&dy, &w}), bytes({&dx}));
  note_host_scratch(conv2d_host_scratch_bytes(g, dy.dtype(), cpu::ConvDirection::backward_data));
  hold_workspace(conv2d_workspace_bytes(g, dy.dtype(), cpu::ConvDirection::backward_data));
}

void MetaBackend::conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                         Tensor& dw) {
  operand_check::conv2d_backward_filter(rules_, g, x, dy, dw);
  const double f = conv_flops(g);
  count_products("conv2d_backward_filter", f, x.dtype(), bytes({&x, &dy}), bytes({&dw}));
  note_host_scratch(conv2d_host_scratch_bytes(g, x.dtype(), cpu::ConvDirection::backward_filter));
  hold_workspace(conv2d_workspace_bytes(g, x.dtype(), cpu::ConvDirection::backward_filter));
}

void MetaBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          Tensor& running_mean, Tensor& running_var, double, double,
                                          Tensor& y, Tensor& saved_mean, Tensor& saved_invstd) {
  operand_check::batchnorm_forward_train(rules_, x, gamma, beta, running_mean, running_var, y,
                                         saved_mean, saved_invstd);
  count("batchnorm_forward_train", 0, kBatchNormForwardOps * numel(x),
        bytes({&x, &gamma, &beta, &running_mean, &running_var}),
        bytes({&y, &running_mean, &running_var, &saved_mean, &saved_invstd}));
}

void MetaBackend::batchnorm_forward_inference(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, const Tensor& running_mean,
                                              const Tensor& running_var, double, Tensor& y) {
  operand_check::batchnorm_forward_inference(rules_, x, gamma, beta, running_mean, running_var,
                                             y);
  count("batchnorm_forward_inference", 0, kBatchNormInferenceOps * numel(x),
        bytes({&x, &gamma, &beta, &running_mean, &running_var}), bytes({&y}));
}

void MetaBackend::batchnorm_forward_saved(const Tensor& x, const Tensor& gamma,
                                          const Tensor& beta, const Tensor& saved_mean,
                                          const Tensor& saved_invstd, Tensor& y) {
  operand_check::batchnorm_forward_saved(rules_, x, gamma, beta, saved_mean, saved_invstd, y);
  count("batchnorm_forward_saved", 0, kBatchNormSavedOps * numel(x),
        bytes({&x, &gamma, &beta, &saved_mean, &saved_invstd}), bytes({&y}));
}

void MetaBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& saved_mean, const Tensor& saved_invstd,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  operand_check::batchnorm_backward(rules_, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma,
                                    dbeta);
  count("batchnorm_backward", 0, kBatchNormBackwardOps * numel(x),
        bytes({&dy, &x, &gamma, &saved_mean, &saved_invstd}), bytes({&dx, &dgamma, &dbeta}));
}

void MetaBackend::prelu_forward(const Tensor& x, const Tensor& slope, Tensor& y) {
  operand_check::prelu_forward(rules_, x, slope, y);
  count("prelu_forward", 0, kPreluForwardOps * numel(x), bytes({&x, &slope}), bytes({&y}));
}

void MetaBackend::prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope, Tensor& dx,
                                 Tensor& dslope) {
  operand_check::prelu_backward(rules_, dy, x, slope, dx, dslope);
  count("prelu_backward", 0, kPreluBackwardOps * numel(x), bytes({&dy, &x, &slope}),
        bytes({&dx, &dslope}));
}

void MetaBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  operand_check::add(rules_, a, b, y);
  count("add", 0, numel(a), bytes({&a, &b}), bytes({&y}));
}

void MetaBackend::axpy(double, const Tensor& x, Tensor& y) {
  operand_check::axpy(rules_, x, y);
  count("axpy", 0, 2 * numel(x), bytes({&x, &y}), bytes({&y}));
}

void MetaBackend::scale(Tensor& x, double) {
  operand_check::scale(rules_, x);
  count("scale", 0, numel(x), bytes({&x}), bytes({&x}));
}

double MetaBackend::sum_of_squares(const Tensor& x) {
  operand_check::sum_of_squares(rules_, x);
  count("sum_of_squares", 0, 2 * numel(x), bytes({&x}), bytes({}));
  return 0.0;
}

bool MetaBackend::all_finite(const Tensor& x) {
  operand_check::all_finite(rules_, x);
  count("all_finite", 0, numel(x), bytes({&x}), bytes({}));
  return true;
}

void MetaBackend::gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                       const Tensor& b, double beta, Tensor& c) {
  const auto [m, n, k] = operand_check::gemm(rules_, transpose_a, transpose_b, a, b, c);
  const double f = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  // c is read too when beta keeps a part of it.
  const double read = bytes({&a, &b}) + (beta != 0.0 ? bytes({&c}) : 0.0);
  count_products("gemm", f, a.dtype(), read, bytes({&c}));
  note_host_scratch(gemm_host_scratch_bytes(transpose_a, transpose_b, alpha, a, b, beta, c));
  hold_workspace(gemm_workspace_bytes(transpose_a, transpose_b, alpha, a, b, beta, c));
}

void MetaBackend::add_row_vector(Tensor& x, const Tensor& bias) {
  operand_check::add_row_vector(rules_, x, bias);
  count("add_row_vector", 0, numel(x), bytes({&x, &bias}), bytes({&x}));
}

void MetaBackend::sum_rows(const Tensor& x, Tensor& out) {
  operand_check::sum_rows(rules_, x, out);
  count("sum_rows", 0, numel(x), bytes({&x}), bytes({&out}));
}

void MetaBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) {
  operand_check::l2_normalize_rows(rules_, x, y, norms);
  count("l2_normalize_rows", 0, kL2NormalizeOps * numel(x), bytes({&x}), bytes({&y, &norms}));
}

void MetaBackend::l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                             Tensor& dx) {
  operand_check::l2_normalize_rows_backward(rules_, dy, y, norms, dx);
  count("l2_normalize_rows_backward", 0, kL2NormalizeBackwardOps * numel(y),
        bytes({&dy, &y, &norms}), bytes({&dx}));
}

void MetaBackend::gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  operand_check::gather_rows(rules_, src, index, dst);
  // It reads as many rows of src as it writes to dst.
  count("gather_rows", 0, 0, bytes({&index, &dst}), bytes({&dst}));
}

void MetaBackend::scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  operand_check::scatter_rows(rules_, src, index, dst);
  // It writes as many rows of dst as src has.
  count("scatter_rows", 0, 0, bytes({&src, &index}), bytes({&src}));
}

void MetaBackend::margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams&,
                                Tensor& row_max) {
  operand_check::margin_logits(rules_, cos, local_label, row_max);
  count("margin_logits", 0, kMarginLogitsOps * numel(cos), bytes({&cos, &local_label}),
        bytes({&cos, &row_max}));
}

void MetaBackend::exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) {
  operand_check::exp_and_row_sum(rules_, logits, global_max, row_sum);
  count("exp_and_row_sum", 0, kExpRowSumOps * numel(logits), bytes({&logits, &global_max}),
        bytes({&logits, &row_sum}));
}

void MetaBackend::softmax_grad(Tensor& exp_logits, const Tensor& global_sum,
                               const Tensor& local_label, double, std::int64_t global_batch,
                               Tensor& target_prob) {
  operand_check::softmax_grad(rules_, exp_logits, global_sum, local_label, global_batch,
                              target_prob);
  count("softmax_grad", 0, kSoftmaxGradOps * numel(exp_logits),
        bytes({&exp_logits, &global_sum, &local_label}), bytes({&exp_logits, &target_prob}));
}

void MetaBackend::interclass_filter(Tensor& cos, const Tensor& local_label, double,
                                    Tensor& keep) {
  operand_check::interclass_filter(rules_, cos, local_label, keep);
  count("interclass_filter", 0, kFilterOps * numel(cos), bytes({&cos, &local_label}),
        bytes({&cos, &keep}));
}

void MetaBackend::interclass_filter_backward(Tensor& grad, const Tensor& keep) {
  operand_check::interclass_filter_backward(rules_, grad, keep);
  count("interclass_filter_backward", 0, kFilterBackwardOps * numel(grad),
        bytes({&grad, &keep}), bytes({&grad}));
}

void MetaBackend::margin_gradient_factor(const Tensor& cos, const Tensor& local_label,
                                         const MarginParams&, Tensor& factor) {
  operand_check::margin_gradient_factor(rules_, cos, local_label, factor);
  // One cosine per row (its target's) is read, not the whole row.
  const double targets = numel(local_label) * static_cast<double>(dtype_size(cos.dtype()));
  count("margin_gradient_factor", 0, kMarginFactorOps * numel(local_label),
        bytes({&local_label}) + targets, bytes({&factor}));
}

void MetaBackend::scale_target_column(Tensor& grad, const Tensor& local_label,
                                      const Tensor& factor) {
  operand_check::scale_target_column(rules_, grad, local_label, factor);
  // One element per row (its target's) is read and written.
  const double targets = numel(local_label) * static_cast<double>(dtype_size(grad.dtype()));
  count("scale_target_column", 0, kScaleTargetOps * numel(local_label),
        bytes({&local_label, &factor}) + targets, targets);
}

void MetaBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& m, double, double, double,
                             const StochasticRounding&) {
  operand_check::sgd_update(rules_, w, g, m);
  count("sgd_update", 0, kSgdOps * numel(w), bytes({&w, &g, &m}), bytes({&w, &m}));
}

void MetaBackend::sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                  double, double, double, const StochasticRounding&) {
  operand_check::sgd_update_rows(rules_, w, m, index, g);
  // It reads and writes the rows of w and m that g has.
  const double rows = numel(g) * row_element_bytes({&w, &m});
  count("sgd_update_rows", 0, kSgdOps * numel(g), bytes({&g, &index}) + rows, rows);
}

void MetaBackend::adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                               const AdamWParams& p, const StochasticRounding&) {
  adamw_factors(p, "adamw_update");
  operand_check::adamw_update(rules_, w, g, m, v);
  count("adamw_update", 0, kAdamWOps * numel(w), bytes({&w, &g, &m, &v}), bytes({&w, &m, &v}));
}

void MetaBackend::adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                    const Tensor& g, const AdamWParams& p,
                                    const StochasticRounding&) {
  adamw_factors(p, "adamw_update_rows");
  operand_check::adamw_update_rows(rules_, w, m, v, index, g);
  // It reads and writes the rows of w, m and v that g has.
  const double rows = numel(g) * row_element_bytes({&w, &m, &v});
  count("adamw_update_rows", 0, kAdamWOps * numel(g), bytes({&g, &index}) + rows, rows);
}

void MetaBackend::sgd_update_sparse_grad(Tensor& w, Tensor& m, const Tensor& index,
                                         const Tensor& g, double, double, double,
                                         const StochasticRounding&) {
  operand_check::sgd_update_sparse_grad(rules_, w, m, index, g);
  // Every row of w and m is read and written; the gradient only where it has rows.
  count("sgd_update_sparse_grad", 0, kSgdOps * numel(w), bytes({&w, &m, &g, &index}),
        bytes({&w, &m}));
}

void MetaBackend::adamw_update_sparse_grad(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                           const Tensor& g, const AdamWParams& p,
                                           const StochasticRounding&) {
  adamw_factors(p, "adamw_update_sparse_grad");
  operand_check::adamw_update_sparse_grad(rules_, w, m, v, index, g);
  // Every row of w, m and v is read and written; the gradient only where it has rows.
  count("adamw_update_sparse_grad", 0, kAdamWOps * numel(w), bytes({&w, &m, &v, &g, &index}),
        bytes({&w, &m, &v}));
}

}  // namespace pfc
