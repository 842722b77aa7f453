// CudaBackend's batched GEMM and transformer primitives: the shared operand checks by the cuda
// rules, then cuBLAS's strided-batched GEMM or our kernels (transformer_kernels.h) on the
// backend's stream.
#include "backend/cuda/cublas_batched_gemm.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_backend_state.h"
#include "backend/cuda/transformer_kernels.h"
#include "backend/operand_checks.h"

namespace pfc {

void CudaBackend::batched_gemm(const BatchedGemmGeometry& g, double alpha, const Tensor& a,
                               const Tensor& b, double beta, Tensor& c) {
  operand_check::batched_gemm(r_->rules, g, a, b, c);
  cuda::cublas_batched_gemm(r_->cublas, g, alpha, a, b, beta, c);
}

void CudaBackend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    double eps, Tensor& y, Tensor& saved_mean,
                                    Tensor& saved_invstd) {
  const auto [rows, width] =
      operand_check::layernorm_forward(r_->rules, x, gamma, beta, y, saved_mean, saved_invstd);
  cuda::LayerNormForwardArgs a;
  a.x = x.raw();
  a.y = y.raw();
  a.dtype = x.dtype();
  a.rows = rows;
  a.width = width;
  a.gamma = gamma.data<float>();
  a.beta = beta.data<float>();
  a.saved_mean = saved_mean.data<float>();
  a.saved_invstd = saved_invstd.data<float>();
  a.eps = eps;
  cuda::launch_layernorm_forward(a, r_->stream);
}

void CudaBackend::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& saved_mean, const Tensor& saved_invstd,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const auto [rows, width] = operand_check::layernorm_backward(
      r_->rules, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma, dbeta);
  Tensor work = scratch(cuda::layernorm_backward_scratch_bytes(rows, width));
  cuda::LayerNormBackwardArgs a;
  a.dy = dy.raw();
  a.x = x.raw();
  a.dx = dx.raw();
  a.dtype = x.dtype();
  a.rows = rows;
  a.width = width;
  a.gamma = gamma.data<float>();
  a.saved_mean = saved_mean.data<float>();
  a.saved_invstd = saved_invstd.data<float>();
  a.dgamma = dgamma.data<float>();
  a.dbeta = dbeta.data<float>();
  cuda::launch_layernorm_backward(a, work.raw(), r_->stream);
}

void CudaBackend::softmax_rows_forward(const Tensor& x, Tensor& y) {
  const auto [rows, width] = operand_check::softmax_rows_forward(r_->rules, x, y);
  cuda::launch_softmax_rows_forward(x.raw(), y.raw(), x.dtype(), rows, width, r_->stream);
}

void CudaBackend::softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  const auto [rows, width] = operand_check::softmax_rows_backward(r_->rules, dy, y, dx);
  cuda::launch_softmax_rows_backward(dy.raw(), y.raw(), dx.raw(), y.dtype(), rows, width,
                                     r_->stream);
}

void CudaBackend::relu6_forward(const Tensor& x, Tensor& y) {
  operand_check::relu6_forward(r_->rules, x, y);
  cuda::launch_relu6_forward(x.raw(), y.raw(), x.dtype(), x.numel(), r_->stream);
}

void CudaBackend::relu6_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  operand_check::relu6_backward(r_->rules, dy, y, dx);
  cuda::launch_relu6_backward(dy.raw(), y.raw(), dx.raw(), y.dtype(), y.numel(), r_->stream);
}

void CudaBackend::scale_samples(const Tensor& x, const Tensor& factor, Tensor& y) {
  const auto [samples, per_sample] = operand_check::scale_samples(r_->rules, x, factor, y);
  cuda::launch_scale_samples(x.raw(), factor.data<float>(), y.raw(), x.dtype(), samples,
                             per_sample, r_->stream);
}

}  // namespace pfc
