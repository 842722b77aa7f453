// MetaBackend's batched GEMM and transformer primitives: checked by the planned backend's rules,
// counted as meta_backend_ops.cpp counts the others (hand counts of the CPU reference loops per
// element; every operand read once and every output written once).
#include "backend/meta/meta_backend.h"
#include "backend/operand_checks.h"

namespace pfc {

namespace {

constexpr double kLayerNormForwardOps = 8;    // sum; centred square (sub, mul, add); (x - m)
                                              // * invstd * gamma + beta (4)
constexpr double kLayerNormBackwardOps = 16;  // dgamma (sub, mul, mul, add), dbeta (add); row
                                              // sums of g and g * xhat (mul, add, sub, mul, mul,
                                              // add); dx (sub, mul, sub, mul, mul) less shared
constexpr double kSoftmaxRowsForwardOps = 5;  // max; sub, exp, add; divide
constexpr double kSoftmaxRowsBackwardOps = 4;  // dot (mul, add); y * (dy - dot) (sub, mul)
constexpr double kRelu6ForwardOps = 2;        // two comparisons
constexpr double kRelu6BackwardOps = 2;       // two comparisons and a select
constexpr double kScaleSamplesOps = 1;        // one multiply

double numel(const Tensor& t) { return static_cast<double>(t.numel()); }

}  // namespace

void MetaBackend::batched_gemm(const BatchedGemmGeometry& g, double, const Tensor& a,
                               const Tensor& b, double beta, Tensor& c) {
  operand_check::batched_gemm(rules_, g, a, b, c);
  const double matrices = static_cast<double>(g.outer) * static_cast<double>(g.inner);
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n),
               k = static_cast<double>(g.k);
  const double element = static_cast<double>(dtype_size(a.dtype()));
  const double out = static_cast<double>(dtype_size(c.dtype()));  // f32 with bf16 operands
  // The matrices of the batch, not the whole tensors they lie in (attention's q and k are
  // columns of one qkv tensor).
  const double read = matrices * (element * (m * k + k * n) + (beta != 0.0 ? out * m * n : 0.0));
  count_products("batched_gemm", 2.0 * matrices * m * n * k, a.dtype(), read,
                 matrices * out * m * n);
}

void MetaBackend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    double, Tensor& y, Tensor& saved_mean, Tensor& saved_invstd) {
  operand_check::layernorm_forward(rules_, x, gamma, beta, y, saved_mean, saved_invstd);
  count("layernorm_forward", 0, kLayerNormForwardOps * numel(x), bytes({&x, &gamma, &beta}),
        bytes({&y, &saved_mean, &saved_invstd}));
}

void MetaBackend::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& saved_mean, const Tensor& saved_invstd,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  operand_check::layernorm_backward(rules_, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma,
                                    dbeta);
  count("layernorm_backward", 0, kLayerNormBackwardOps * numel(x),
        bytes({&dy, &x, &gamma, &saved_mean, &saved_invstd}), bytes({&dx, &dgamma, &dbeta}));
}

void MetaBackend::softmax_rows_forward(const Tensor& x, Tensor& y) {
  operand_check::softmax_rows_forward(rules_, x, y);
  count("softmax_rows_forward", 0, kSoftmaxRowsForwardOps * numel(x), bytes({&x}), bytes({&y}));
}

void MetaBackend::softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  operand_check::softmax_rows_backward(rules_, dy, y, dx);
  count("softmax_rows_backward", 0, kSoftmaxRowsBackwardOps * numel(y), bytes({&dy, &y}),
        bytes({&dx}));
}

void MetaBackend::relu6_forward(const Tensor& x, Tensor& y) {
  operand_check::relu6_forward(rules_, x, y);
  count("relu6_forward", 0, kRelu6ForwardOps * numel(x), bytes({&x}), bytes({&y}));
}

void MetaBackend::relu6_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  operand_check::relu6_backward(rules_, dy, y, dx);
  count("relu6_backward", 0, kRelu6BackwardOps * numel(y), bytes({&dy, &y}), bytes({&dx}));
}

void MetaBackend::scale_samples(const Tensor& x, const Tensor& factor, Tensor& y) {
  operand_check::scale_samples(rules_, x, factor, y);
  count("scale_samples", 0, kScaleSamplesOps * numel(x), bytes({&x, &factor}), bytes({&y}));
}

}  // namespace pfc
