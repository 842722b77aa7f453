// CudaBackend's compute primitives: the shared operand checks (backend/operand_checks.h, by
// the cuda rules), then cuDNN, cuBLAS or one of our kernel launchers on the backend's stream.
// Semantics are backend.h's, shared with the CPU backend.
#include <cstring>

#include "backend/cuda/adamw_kernels.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_backend_state.h"
#include "backend/cuda/elementwise_kernels.h"
#include "backend/cuda/interclass_filter_kernels.h"
#include "backend/cuda/margin_softmax_kernels.h"
#include "backend/cuda/norm_kernels.h"
#include "backend/cuda/reduction_kernels.h"
#include "backend/cuda/rows_kernels.h"
#include "backend/cuda/sgd_kernels.h"
#include "backend/operand_checks.h"
#include "core/error.h"

namespace pfc {

namespace {

// [rows, ...] -> bytes per row.
std::int64_t row_bytes(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : static_cast<std::int64_t>(t.bytes()) / t.dim(0);
}

}  // namespace

// ---- convolution ------------------------------------------------------------------------

void CudaBackend::conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                 Tensor& y) {
  operand_check::conv2d_forward(r_->rules, g, x, w, y);
  r_->convolution->forward(g, x.dtype(), x.raw(), w.raw(), y.raw());
}

void CudaBackend::conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                       Tensor& dx) {
  operand_check::conv2d_backward_data(r_->rules, g, dy, w, dx);
  r_->convolution->backward_data(g, dy.dtype(), dy.raw(), w.raw(), dx.raw());
}

void CudaBackend::conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                         Tensor& dw) {
  operand_check::conv2d_backward_filter(r_->rules, g, x, dy, dw);
  r_->convolution->backward_filter(g, x.dtype(), x.raw(), dy.raw(), dw.raw());
}

// ---- batch-norm and PReLU ---------------------------------------------------------------

void CudaBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          Tensor& running_mean, Tensor& running_var,
                                          double momentum, double eps, Tensor& y,
                                          Tensor& saved_mean, Tensor& saved_invstd) {
  const auto [rows, channels] = operand_check::batchnorm_forward_train(
      r_->rules, x, gamma, beta, running_mean, running_var, y, saved_mean, saved_invstd);
  cuda::BatchNormForwardArgs a;
  a.x = x.raw();
  a.y = y.raw();
  a.dtype = x.dtype();
  a.rows = rows;
  a.channels = channels;
  a.gamma = gamma.data<float>();
  a.beta = beta.data<float>();
  a.running_mean = running_mean.data<float>();
  a.running_var = running_var.data<float>();
  a.saved_mean = saved_mean.data<float>();
  a.saved_invstd = saved_invstd.data<float>();
  a.momentum = momentum;
  a.eps = eps;
  Tensor work = scratch(cuda::batchnorm_forward_scratch_bytes(rows, channels));
  cuda::launch_batchnorm_forward_train(a, work.raw(), r_->stream);
}

void CudaBackend::batchnorm_forward_inference(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, const Tensor& running_mean,
                                              const Tensor& running_var, double eps, Tensor& y) {
  const auto [rows, channels] = operand_check::batchnorm_forward_inference(
      r_->rules, x, gamma, beta, running_mean, running_var, y);
  cuda::BatchNormInferenceArgs a;
  a.x = x.raw();
  a.y = y.raw();
  a.dtype = x.dtype();
  a.rows = rows;
  a.channels = channels;
  a.gamma = gamma.data<float>();
  a.beta = beta.data<float>();
  a.running_mean = running_mean.data<float>();
  a.running_var = running_var.data<float>();
  a.eps = eps;
  Tensor work = scratch(cuda::batchnorm_inference_scratch_bytes(channels));
  cuda::launch_batchnorm_forward_inference(a, work.raw(), r_->stream);
}

void CudaBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& saved_mean, const Tensor& saved_invstd,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const auto [rows, channels] = operand_check::batchnorm_backward(
      r_->rules, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma, dbeta);
  cuda::BatchNormBackwardArgs a;
  a.dy = dy.raw();
  a.x = x.raw();
  a.dx = dx.raw();
  a.dtype = x.dtype();
  a.rows = rows;
  a.channels = channels;
  a.gamma = gamma.data<float>();
  a.saved_mean = saved_mean.data<float>();
  a.saved_invstd = saved_invstd.data<float>();
  a.dgamma = dgamma.data<float>();
  a.dbeta = dbeta.data<float>();
  Tensor work = scratch(cuda::batchnorm_backward_scratch_bytes(rows, channels));
  cuda::launch_batchnorm_backward(a, work.raw(), r_->stream);
}

void CudaBackend::prelu_forward(const Tensor& x, const Tensor& slope, Tensor& y) {
  const auto [rows, channels] = operand_check::prelu_forward(r_->rules, x, slope, y);
  cuda::launch_prelu_forward(x.raw(), y.raw(), x.dtype(), rows, channels, slope.data<float>(),
                             r_->stream);
}

void CudaBackend::prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope, Tensor& dx,
                                 Tensor& dslope) {
  const auto [rows, channels] = operand_check::prelu_backward(r_->rules, dy, x, slope, dx, dslope);
  Tensor work = scratch(cuda::prelu_backward_scratch_bytes(rows, channels));
  cuda::launch_prelu_backward(dy.raw(), x.raw(), dx.raw(), x.dtype(), rows, channels,
                              slope.data<float>(), dslope.data<float>(), work.raw(), r_->stream);
}

// ---- elementwise and reductions ---------------------------------------------------------

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  operand_check::add(r_->rules, a, b, y);
  cuda::launch_add(a.raw(), b.raw(), y.raw(), a.dtype(), a.numel(), r_->stream);
}

void CudaBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  operand_check::axpy(r_->rules, x, y);
  cuda::launch_axpy(alpha, x.raw(), x.dtype(), y.raw(), y.dtype(), y.numel(), r_->stream);
}

void CudaBackend::scale(Tensor& x, double alpha) {
  operand_check::scale(r_->rules, x);
  cuda::launch_scale(x.raw(), x.dtype(), x.numel(), alpha, r_->stream);
}

double CudaBackend::sum_of_squares(const Tensor& x) {
  operand_check::sum_of_squares(r_->rules, x);
  if (x.numel() == 0) return 0.0;
  Tensor work = scratch(cuda::sum_of_squares_scratch_bytes(x.numel()));
  double* result = static_cast<double*>(work.raw());  // the f64 slot at the scratch's start
  cuda::launch_sum_of_squares(x.raw(), x.dtype(), x.numel(), work.raw(), result, r_->stream);
  double* host = static_cast<double*>(r_->host_results.raw()) + 1;
  PFC_CHECK_CUDA(cudaMemcpyAsync(host, result, sizeof(double), cudaMemcpyDeviceToHost, r_->stream));
  wait_and_check();
  return *host;
}

bool CudaBackend::all_finite(const Tensor& x) {
  operand_check::all_finite(r_->rules, x);
  Tensor found = scratch(sizeof(int));
  cuda::launch_find_nonfinite(x.raw(), x.dtype(), x.numel(), static_cast<int*>(found.raw()),
                              r_->stream);
  int* host = reinterpret_cast<int*>(static_cast<double*>(r_->host_results.raw()) + 1);
  PFC_CHECK_CUDA(
      cudaMemcpyAsync(host, found.raw(), sizeof(int), cudaMemcpyDeviceToHost, r_->stream));
  wait_and_check();
  return *host == 0;
}

// ---- dense algebra -----------------------------------------------------------------------

void CudaBackend::gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                       const Tensor& b, double beta, Tensor& c) {
  operand_check::gemm(r_->rules, transpose_a, transpose_b, a, b, c);
  cuda::cublas_gemm(r_->cublas, transpose_a, transpose_b, alpha, a, b, beta, c);
}

void CudaBackend::add_row_vector(Tensor& x, const Tensor& bias) {
  const auto [rows, cols] = operand_check::add_row_vector(r_->rules, x, bias);
  cuda::launch_add_row_vector(x.raw(), x.dtype(), rows, cols, bias.raw(), bias.dtype(), r_->stream);
}

void CudaBackend::sum_rows(const Tensor& x, Tensor& out) {
  const auto [rows, cols] = operand_check::sum_rows(r_->rules, x, out);
  Tensor work = scratch(cuda::sum_rows_scratch_bytes(rows, cols));
  cuda::launch_sum_rows(x.raw(), x.dtype(), rows, cols, out.raw(), out.dtype(), work.raw(),
                        r_->stream);
}

// ---- PartialFC pieces ----------------------------------------------------------------------

void CudaBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) {
  operand_check::l2_normalize_rows(r_->rules, x, y, norms);
  cuda::launch_l2_normalize_rows(x.raw(), x.dtype(), y.raw(), y.dtype(), norms.data<float>(),
                                 x.dim(0), x.dim(1), r_->stream);
}

void CudaBackend::l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                             Tensor& dx) {
  operand_check::l2_normalize_rows_backward(r_->rules, dy, y, norms, dx);
  cuda::launch_l2_normalize_rows_backward(dy.raw(), dy.dtype(), y.raw(), y.dtype(),
                                          norms.data<float>(), dx.raw(), dx.dtype(), y.dim(0),
                                          y.dim(1), r_->stream);
}

void CudaBackend::gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  operand_check::gather_rows(r_->rules, src, index, dst);
  cuda::launch_gather_rows(src.raw(), src.dim(0), index.data<std::int64_t>(), dst.dim(0), dst.raw(),
                           row_bytes(src.dim(0) ? src : dst), error_flag(), kGatherIndexOutOfRange,
                           r_->stream);
}

void CudaBackend::scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  operand_check::scatter_rows(r_->rules, src, index, dst);
  cuda::launch_scatter_rows(src.raw(), index.data<std::int64_t>(), src.dim(0), dst.raw(),
                            dst.dim(0), row_bytes(dst.dim(0) ? dst : src), error_flag(),
                            kScatterIndexOutOfRange, r_->stream);
}

void CudaBackend::margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams& margin,
                                Tensor& row_max) {
  operand_check::margin_logits(r_->rules, cos, local_label, row_max);
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  Tensor work = scratch(cuda::margin_softmax_scratch_bytes(batch, classes));
  cuda::launch_margin_logits(cos.raw(), cos.dtype(), batch, classes,
                             local_label.data<std::int64_t>(),
                             {margin.m1, margin.m2, margin.m3, margin.scale}, row_max.data<float>(),
                             work.raw(), error_flag(), kMarginLabelOutOfRange, r_->stream);
}

void CudaBackend::exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) {
  operand_check::exp_and_row_sum(r_->rules, logits, global_max, row_sum);
  const std::int64_t batch = logits.dim(0), classes = logits.dim(1);
  Tensor work = scratch(cuda::margin_softmax_scratch_bytes(batch, classes));
  cuda::launch_exp_and_row_sum(logits.raw(), logits.dtype(), batch, classes,
                               global_max.data<float>(), row_sum.data<float>(), work.raw(),
                               r_->stream);
}

void CudaBackend::softmax_grad(Tensor& exp_logits, const Tensor& global_sum,
                               const Tensor& local_label, double scale, std::int64_t global_batch,
                               Tensor& target_prob) {
  operand_check::softmax_grad(r_->rules, exp_logits, global_sum, local_label, global_batch,
                              target_prob);
  const std::int64_t batch = exp_logits.dim(0), classes = exp_logits.dim(1);
  if (classes == 0) fill(target_prob, 0.0);
  cuda::launch_softmax_grad(exp_logits.raw(), exp_logits.dtype(), batch, classes,
                            global_sum.data<float>(), local_label.data<std::int64_t>(), scale,
                            global_batch, target_prob.data<float>(), error_flag(),
                            kSoftmaxLabelOutOfRange, r_->stream);
}

void CudaBackend::interclass_filter(Tensor& cos, const Tensor& local_label, double threshold,
                                    Tensor& keep) {
  operand_check::interclass_filter(r_->rules, cos, local_label, keep);
  cuda::launch_interclass_filter(cos.raw(), cos.dtype(), cos.dim(0), cos.dim(1),
                                 local_label.data<std::int64_t>(), threshold,
                                 keep.data<std::uint8_t>(), error_flag(), kFilterLabelOutOfRange,
                                 r_->stream);
}

void CudaBackend::interclass_filter_backward(Tensor& grad, const Tensor& keep) {
  operand_check::interclass_filter_backward(r_->rules, grad, keep);
  cuda::launch_interclass_filter_backward(grad.raw(), grad.dtype(), grad.numel(),
                                          keep.data<std::uint8_t>(), r_->stream);
}

void CudaBackend::margin_gradient_factor(const Tensor& cos, const Tensor& local_label,
                                         const MarginParams& margin, Tensor& factor) {
  operand_check::margin_gradient_factor(r_->rules, cos, local_label, factor);
  cuda::launch_margin_gradient_factor(cos.raw(), cos.dtype(), cos.dim(0), cos.dim(1),
                                      local_label.data<std::int64_t>(),
                                      {margin.m1, margin.m2, margin.m3, margin.scale},
                                      factor.data<float>(), error_flag(),
                                      kMarginFactorLabelOutOfRange, r_->stream);
}

void CudaBackend::scale_target_column(Tensor& grad, const Tensor& local_label,
                                      const Tensor& factor) {
  operand_check::scale_target_column(r_->rules, grad, local_label, factor);
  cuda::launch_scale_target_column(grad.raw(), grad.dtype(), grad.dim(0), grad.dim(1),
                                   local_label.data<std::int64_t>(), factor.data<float>(),
                                   error_flag(), kScaleTargetLabelOutOfRange, r_->stream);
}

// ---- optimiser ------------------------------------------------------------------------------

void CudaBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                             double weight_decay) {
  operand_check::sgd_update(r_->rules, w, g, m);
  cuda::launch_sgd_update(w.data<float>(), g.raw(), g.dtype(), m.data<float>(), w.numel(),
                          {lr, momentum, weight_decay}, r_->stream);
}

void CudaBackend::sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                  double lr, double momentum, double weight_decay) {
  operand_check::sgd_update_rows(r_->rules, w, m, index, g);
  cuda::launch_sgd_update_rows(w.data<float>(), m.data<float>(), w.dim(0), w.dim(1),
                               index.data<std::int64_t>(), g.raw(), g.dtype(), g.dim(0),
                               {lr, momentum, weight_decay}, error_flag(), kSgdRowIndexOutOfRange,
                               r_->stream);
}

void CudaBackend::sgd_update_sparse_grad(Tensor& w, Tensor& m, const Tensor& index,
                                         const Tensor& g, double lr, double momentum,
                                         double weight_decay) {
  operand_check::sgd_update_sparse_grad(r_->rules, w, m, index, g);
  cuda::launch_sgd_update_sparse_grad(w.data<float>(), m.data<float>(), w.dim(0), w.dim(1),
                                      index.data<std::int64_t>(), g.raw(), g.dtype(), g.dim(0),
                                      {lr, momentum, weight_decay}, error_flag(),
                                      kSgdSparseIndexInvalid, r_->stream);
}

namespace {

cuda::AdamWConstants adamw_constants(const AdamWParams& p, const char* op) {
  const AdamWFactors f = adamw_factors(p, op);
  return {f.decay, p.beta1, p.beta2, p.eps, f.step_size, f.bias2_sqrt};
}

}  // namespace

void CudaBackend::adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                               const AdamWParams& p) {
  const cuda::AdamWConstants c = adamw_constants(p, "adamw_update");
  operand_check::adamw_update(r_->rules, w, g, m, v);
  cuda::launch_adamw_update(w.data<float>(), g.raw(), g.dtype(), m.data<float>(),
                            v.data<float>(), w.numel(), c, r_->stream);
}

void CudaBackend::adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                    const Tensor& g, const AdamWParams& p) {
  const cuda::AdamWConstants c = adamw_constants(p, "adamw_update_rows");
  operand_check::adamw_update_rows(r_->rules, w, m, v, index, g);
  cuda::launch_adamw_update_rows(w.data<float>(), m.data<float>(), v.data<float>(), w.dim(0),
                                 w.dim(1), index.data<std::int64_t>(), g.raw(), g.dtype(),
                                 g.dim(0), c, error_flag(), kAdamWRowIndexOutOfRange, r_->stream);
}

void CudaBackend::adamw_update_sparse_grad(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                           const Tensor& g, const AdamWParams& p) {
  const cuda::AdamWConstants c = adamw_constants(p, "adamw_update_sparse_grad");
  operand_check::adamw_update_sparse_grad(r_->rules, w, m, v, index, g);
  cuda::launch_adamw_update_sparse_grad(w.data<float>(), m.data<float>(), v.data<float>(),
                                        w.dim(0), w.dim(1), index.data<std::int64_t>(), g.raw(),
                                        g.dtype(), g.dim(0), c, error_flag(),
                                        kAdamWSparseIndexInvalid, r_->stream);
}

}  // namespace pfc
