// CudaBackend's compute primitives: operand checks, then cuDNN, cuBLAS or one of our kernel
// launchers on the backend's stream. Semantics are backend.h's, shared with the CPU backend.
#include <cstring>
#include <utility>

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
#include "core/error.h"

namespace pfc {

namespace {

void require_f32_vector(const Tensor& t, std::int64_t n, const char* op, const char* operand) {
  require_device(t, op, operand);
  check_dtype(t, DType::f32, op, operand);
  check_shape(t, {n}, op, operand);
}

// The margin-softmax kernels give each row its own grid row (gridDim.y <= 65535).
void require_launchable_rows(std::int64_t rows, const char* op) {
  PFC_CHECK(rows <= 65535, "{}: {} rows (the global batch) exceed the 65535 one launch covers",
            op, rows);
}

void require_index(const Tensor& index, std::int64_t n, const char* op) {
  require_device(index, op, "index");
  check_dtype(index, DType::i64, op, "index");
  check_shape(index, {n}, op, "index");
}

// [rows, ...] -> bytes per row.
std::int64_t row_bytes(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : static_cast<std::int64_t>(t.bytes()) / t.dim(0);
}

Shape trailing(const Tensor& t) { return Shape(t.shape().begin() + 1, t.shape().end()); }

void require_conv_operands(const Conv2dGeometry& g, const Tensor& act, const char* act_name,
                           const Shape& act_shape, const Tensor& w, const char* w_name,
                           const Tensor& out, const char* out_name, const Shape& out_shape,
                           const char* op) {
  require_float(act, op, act_name);
  require_device(w, op, w_name);
  require_device(out, op, out_name);
  check_dtype(w, act.dtype(), op, w_name);
  check_dtype(out, act.dtype(), op, out_name);
  check_shape(act, act_shape, op, act_name);
  check_shape(w, g.filter_shape(), op, w_name);
  check_shape(out, out_shape, op, out_name);
}

}  // namespace

// ---- convolution ------------------------------------------------------------------------

void CudaBackend::conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                 Tensor& y) {
  require_conv_operands(g, x, "x", g.input_shape(), w, "w", y, "y", g.output_shape(),
                        "conv2d_forward");
  r_->convolution->forward(g, x.dtype(), x.raw(), w.raw(), y.raw());
}

void CudaBackend::conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                       Tensor& dx) {
  require_conv_operands(g, dy, "dy", g.output_shape(), w, "w", dx, "dx", g.input_shape(),
                        "conv2d_backward_data");
  r_->convolution->backward_data(g, dy.dtype(), dy.raw(), w.raw(), dx.raw());
}

void CudaBackend::conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                         Tensor& dw) {
  require_conv_operands(g, x, "x", g.input_shape(), dw, "dw", dy, "dy", g.output_shape(),
                        "conv2d_backward_filter");
  r_->convolution->backward_filter(g, x.dtype(), x.raw(), dy.raw(), dw.raw());
}

// ---- batch-norm and PReLU ---------------------------------------------------------------

void CudaBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          Tensor& running_mean, Tensor& running_var,
                                          double momentum, double eps, Tensor& y,
                                          Tensor& saved_mean, Tensor& saved_invstd) {
  constexpr const char* op = "batchnorm_forward_train";
  require_float(x, op, "x");
  require_device(gamma, op, "gamma");
  const std::int64_t channels = gamma.numel();
  const std::int64_t rows = rows_of(x, channels, op, "x");
  PFC_CHECK(rows > 1, "{}: x {} has {} rows; the unbiased variance needs at least 2", op,
            x.describe(), rows);
  require_device(y, op, "y");
  check_dtype(y, x.dtype(), op, "y");
  check_shape(y, x.shape(), op, "y");
  require_f32_vector(gamma, channels, op, "gamma");
  require_f32_vector(beta, channels, op, "beta");
  require_f32_vector(running_mean, channels, op, "running_mean");
  require_f32_vector(running_var, channels, op, "running_var");
  require_f32_vector(saved_mean, channels, op, "saved_mean");
  require_f32_vector(saved_invstd, channels, op, "saved_invstd");

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

void CudaBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& saved_mean, const Tensor& saved_invstd,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  constexpr const char* op = "batchnorm_backward";
  require_float(x, op, "x");
  require_device(gamma, op, "gamma");
  const std::int64_t channels = gamma.numel();
  const std::int64_t rows = rows_of(x, channels, op, "x");
  PFC_CHECK(rows > 0, "{}: x {} has no rows", op, x.describe());
  for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&dy, "dy"}, {&dx, "dx"}}) {
    require_device(*t, op, name);
    check_dtype(*t, x.dtype(), op, name);
    check_shape(*t, x.shape(), op, name);
  }
  require_f32_vector(gamma, channels, op, "gamma");
  require_f32_vector(saved_mean, channels, op, "saved_mean");
  require_f32_vector(saved_invstd, channels, op, "saved_invstd");
  require_f32_vector(dgamma, channels, op, "dgamma");
  require_f32_vector(dbeta, channels, op, "dbeta");

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
  constexpr const char* op = "prelu_forward";
  require_float(x, op, "x");
  require_device(slope, op, "slope");
  const std::int64_t channels = slope.numel();
  const std::int64_t rows = rows_of(x, channels, op, "x");
  require_f32_vector(slope, channels, op, "slope");
  require_device(y, op, "y");
  check_dtype(y, x.dtype(), op, "y");
  check_shape(y, x.shape(), op, "y");
  cuda::launch_prelu_forward(x.raw(), y.raw(), x.dtype(), rows, channels, slope.data<float>(),
                             r_->stream);
}

void CudaBackend::prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope, Tensor& dx,
                                 Tensor& dslope) {
  constexpr const char* op = "prelu_backward";
  require_float(x, op, "x");
  require_device(slope, op, "slope");
  const std::int64_t channels = slope.numel();
  const std::int64_t rows = rows_of(x, channels, op, "x");
  for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&dy, "dy"}, {&dx, "dx"}}) {
    require_device(*t, op, name);
    check_dtype(*t, x.dtype(), op, name);
    check_shape(*t, x.shape(), op, name);
  }
  require_f32_vector(slope, channels, op, "slope");
  require_f32_vector(dslope, channels, op, "dslope");
  Tensor work = scratch(cuda::prelu_backward_scratch_bytes(rows, channels));
  cuda::launch_prelu_backward(dy.raw(), x.raw(), dx.raw(), x.dtype(), rows, channels,
                              slope.data<float>(), dslope.data<float>(), work.raw(), r_->stream);
}

// ---- elementwise and reductions ---------------------------------------------------------

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  require_float(a, "add", "a");
  require_device(b, "add", "b");
  require_device(y, "add", "y");
  check_dtype(b, a.dtype(), "add", "b");
  check_dtype(y, a.dtype(), "add", "y");
  check_shape(b, a.shape(), "add", "b");
  check_shape(y, a.shape(), "add", "y");
  cuda::launch_add(a.raw(), b.raw(), y.raw(), a.dtype(), a.numel(), r_->stream);
}

void CudaBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  require_float(x, "axpy", "x");
  require_float(y, "axpy", "y");
  check_shape(x, y.shape(), "axpy", "x");
  cuda::launch_axpy(alpha, x.raw(), x.dtype(), y.raw(), y.dtype(), y.numel(), r_->stream);
}

void CudaBackend::scale(Tensor& x, double alpha) {
  require_float(x, "scale", "x");
  cuda::launch_scale(x.raw(), x.dtype(), x.numel(), alpha, r_->stream);
}

double CudaBackend::sum_of_squares(const Tensor& x) {
  require_float(x, "sum_of_squares", "x");
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
  require_float(x, "all_finite", "x");
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
  require_device(a, "gemm", "a");
  require_device(b, "gemm", "b");
  require_device(c, "gemm", "c");
  cuda::cublas_gemm(r_->cublas, transpose_a, transpose_b, alpha, a, b, beta, c);
}

void CudaBackend::add_row_vector(Tensor& x, const Tensor& bias) {
  require_float(x, "add_row_vector", "x");
  require_float(bias, "add_row_vector", "bias");
  PFC_CHECK(bias.rank() == 1, "add_row_vector: bias {} must be a vector", bias.describe());
  const std::int64_t cols = bias.numel();
  const std::int64_t rows = rows_of(x, cols, "add_row_vector", "x");
  cuda::launch_add_row_vector(x.raw(), x.dtype(), rows, cols, bias.raw(), bias.dtype(), r_->stream);
}

void CudaBackend::sum_rows(const Tensor& x, Tensor& out) {
  require_float(x, "sum_rows", "x");
  require_float(out, "sum_rows", "out");
  PFC_CHECK(out.rank() == 1, "sum_rows: out {} must be a vector", out.describe());
  const std::int64_t cols = out.numel();
  const std::int64_t rows = rows_of(x, cols, "sum_rows", "x");
  Tensor work = scratch(cuda::sum_rows_scratch_bytes(rows, cols));
  cuda::launch_sum_rows(x.raw(), x.dtype(), rows, cols, out.raw(), out.dtype(), work.raw(),
                        r_->stream);
}

// ---- PartialFC pieces ----------------------------------------------------------------------

void CudaBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) {
  constexpr const char* op = "l2_normalize_rows";
  require_float(x, op, "x");
  require_float(y, op, "y");
  PFC_CHECK(x.rank() == 2, "{}: x {} must be [rows, cols]", op, x.describe());
  check_shape(y, x.shape(), op, "y");
  require_f32_vector(norms, x.dim(0), op, "norms");
  cuda::launch_l2_normalize_rows(x.raw(), x.dtype(), y.raw(), y.dtype(), norms.data<float>(),
                                 x.dim(0), x.dim(1), r_->stream);
}

void CudaBackend::l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                             Tensor& dx) {
  constexpr const char* op = "l2_normalize_rows_backward";
  require_float(y, op, "y");
  require_float(dy, op, "dy");
  require_float(dx, op, "dx");
  PFC_CHECK(y.rank() == 2, "{}: y {} must be [rows, cols]", op, y.describe());
  check_shape(dy, y.shape(), op, "dy");
  check_shape(dx, y.shape(), op, "dx");
  require_f32_vector(norms, y.dim(0), op, "norms");
  cuda::launch_l2_normalize_rows_backward(dy.raw(), dy.dtype(), y.raw(), y.dtype(),
                                          norms.data<float>(), dx.raw(), dx.dtype(), y.dim(0),
                                          y.dim(1), r_->stream);
}

void CudaBackend::gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  constexpr const char* op = "gather_rows";
  require_device(src, op, "src");
  require_device(dst, op, "dst");
  PFC_CHECK(src.rank() >= 1 && dst.rank() >= 1, "{}: src {} and dst {} need a row dimension", op,
            src.describe(), dst.describe());
  check_dtype(dst, src.dtype(), op, "dst");
  PFC_CHECK(trailing(dst) == trailing(src), "{}: rows of dst {} differ from rows of src {}", op,
            dst.describe(), src.describe());
  require_index(index, dst.dim(0), op);
  cuda::launch_gather_rows(src.raw(), src.dim(0), index.data<std::int64_t>(), dst.dim(0), dst.raw(),
                           row_bytes(src.dim(0) ? src : dst), error_flag(), kGatherIndexOutOfRange,
                           r_->stream);
}

void CudaBackend::scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  constexpr const char* op = "scatter_rows";
  require_device(src, op, "src");
  require_device(dst, op, "dst");
  PFC_CHECK(src.rank() >= 1 && dst.rank() >= 1, "{}: src {} and dst {} need a row dimension", op,
            src.describe(), dst.describe());
  check_dtype(dst, src.dtype(), op, "dst");
  PFC_CHECK(trailing(dst) == trailing(src), "{}: rows of dst {} differ from rows of src {}", op,
            dst.describe(), src.describe());
  require_index(index, src.dim(0), op);
  cuda::launch_scatter_rows(src.raw(), index.data<std::int64_t>(), src.dim(0), dst.raw(),
                            dst.dim(0), row_bytes(dst.dim(0) ? dst : src), error_flag(),
                            kScatterIndexOutOfRange, r_->stream);
}

void CudaBackend::margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams& margin,
                                Tensor& row_max) {
  constexpr const char* op = "margin_logits";
  require_float(cos, op, "cos");
  PFC_CHECK(cos.rank() == 2, "{}: cos {} must be [batch, classes]", op, cos.describe());
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  require_launchable_rows(batch, op);
  require_index(local_label, batch, op);
  require_f32_vector(row_max, batch, op, "row_max");
  Tensor work = scratch(cuda::margin_softmax_scratch_bytes(batch, classes));
  cuda::launch_margin_logits(cos.raw(), cos.dtype(), batch, classes,
                             local_label.data<std::int64_t>(),
                             {margin.m1, margin.m2, margin.m3, margin.scale}, row_max.data<float>(),
                             work.raw(), error_flag(), kMarginLabelOutOfRange, r_->stream);
}

void CudaBackend::exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) {
  constexpr const char* op = "exp_and_row_sum";
  require_float(logits, op, "logits");
  PFC_CHECK(logits.rank() == 2, "{}: logits {} must be [batch, classes]", op, logits.describe());
  const std::int64_t batch = logits.dim(0), classes = logits.dim(1);
  require_launchable_rows(batch, op);
  require_f32_vector(global_max, batch, op, "global_max");
  require_f32_vector(row_sum, batch, op, "row_sum");
  Tensor work = scratch(cuda::margin_softmax_scratch_bytes(batch, classes));
  cuda::launch_exp_and_row_sum(logits.raw(), logits.dtype(), batch, classes,
                               global_max.data<float>(), row_sum.data<float>(), work.raw(),
                               r_->stream);
}

void CudaBackend::softmax_grad(Tensor& exp_logits, const Tensor& global_sum,
                               const Tensor& local_label, double scale, std::int64_t global_batch,
                               Tensor& target_prob) {
  constexpr const char* op = "softmax_grad";
  require_float(exp_logits, op, "exp_logits");
  PFC_CHECK(exp_logits.rank() == 2, "{}: exp_logits {} must be [batch, classes]", op,
            exp_logits.describe());
  PFC_CHECK(global_batch > 0, "{}: global_batch is {}, must be positive", op, global_batch);
  const std::int64_t batch = exp_logits.dim(0), classes = exp_logits.dim(1);
  require_launchable_rows(batch, op);
  require_f32_vector(global_sum, batch, op, "global_sum");
  require_index(local_label, batch, op);
  require_f32_vector(target_prob, batch, op, "target_prob");
  if (classes == 0) fill(target_prob, 0.0);
  cuda::launch_softmax_grad(exp_logits.raw(), exp_logits.dtype(), batch, classes,
                            global_sum.data<float>(), local_label.data<std::int64_t>(), scale,
                            global_batch, target_prob.data<float>(), error_flag(),
                            kSoftmaxLabelOutOfRange, r_->stream);
}

void CudaBackend::interclass_filter(Tensor& cos, const Tensor& local_label, double threshold,
                                    Tensor& keep) {
  constexpr const char* op = "interclass_filter";
  require_device(cos, op, "cos");
  PFC_CHECK(cos.rank() == 2, "{}: cos {} must be [batch, classes]", op, cos.describe());
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  require_launchable_rows(batch, op);
  require_index(local_label, batch, op);
  require_device(keep, op, "keep");
  check_dtype(keep, DType::u8, op, "keep");
  check_shape(keep, cos.shape(), op, "keep");
  cuda::launch_interclass_filter(cos.raw(), cos.dtype(), batch, classes,
                                 local_label.data<std::int64_t>(), threshold,
                                 keep.data<std::uint8_t>(), error_flag(), kFilterLabelOutOfRange,
                                 r_->stream);
}

void CudaBackend::interclass_filter_backward(Tensor& grad, const Tensor& keep) {
  constexpr const char* op = "interclass_filter_backward";
  require_device(grad, op, "grad");
  PFC_CHECK(grad.rank() == 2, "{}: grad {} must be [batch, classes]", op, grad.describe());
  require_device(keep, op, "keep");
  check_dtype(keep, DType::u8, op, "keep");
  check_shape(keep, grad.shape(), op, "keep");
  cuda::launch_interclass_filter_backward(grad.raw(), grad.dtype(), grad.numel(),
                                          keep.data<std::uint8_t>(), r_->stream);
}

// ---- optimiser ------------------------------------------------------------------------------

void CudaBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                             double weight_decay) {
  constexpr const char* op = "sgd_update";
  require_device(w, op, "w");
  require_device(m, op, "m");
  check_dtype(w, DType::f32, op, "w");
  check_dtype(m, DType::f32, op, "m");
  check_shape(m, w.shape(), op, "m");
  require_float(g, op, "g");
  check_shape(g, w.shape(), op, "g");
  cuda::launch_sgd_update(w.data<float>(), g.raw(), g.dtype(), m.data<float>(), w.numel(),
                          {lr, momentum, weight_decay}, r_->stream);
}

void CudaBackend::sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                  double lr, double momentum, double weight_decay) {
  constexpr const char* op = "sgd_update_rows";
  require_device(w, op, "w");
  require_device(m, op, "m");
  check_dtype(w, DType::f32, op, "w");
  check_dtype(m, DType::f32, op, "m");
  PFC_CHECK(w.rank() == 2, "{}: w {} must be [rows, cols]", op, w.describe());
  check_shape(m, w.shape(), op, "m");
  require_float(g, op, "g");
  PFC_CHECK(g.rank() == 2 && g.dim(1) == w.dim(1), "{}: g {} must be [count, {}]", op, g.describe(),
            w.dim(1));
  require_index(index, g.dim(0), op);
  cuda::launch_sgd_update_rows(w.data<float>(), m.data<float>(), w.dim(0), w.dim(1),
                               index.data<std::int64_t>(), g.raw(), g.dtype(), g.dim(0),
                               {lr, momentum, weight_decay}, error_flag(), kSgdRowIndexOutOfRange,
                               r_->stream);
}

namespace {

// w, m and v alike, on the device, f32 or f64; g like w, or f16 beside f32 masters.
void require_adamw_operands(const Tensor& w, const Tensor& m, const Tensor& v, const Tensor& g,
                            const char* op) {
  require_device(w, op, "w");
  PFC_CHECK(w.dtype() == DType::f32 || w.dtype() == DType::f64, "{}: w is {}, expected f32 or f64",
            op, dtype_name(w.dtype()));
  for (const auto& [t, name] : {std::pair{&m, "m"}, std::pair{&v, "v"}}) {
    require_device(*t, op, name);
    check_dtype(*t, w.dtype(), op, name);
    check_shape(*t, w.shape(), op, name);
  }
  require_device(g, op, "g");
}

cuda::AdamWConstants adamw_constants(const AdamWParams& p, const char* op) {
  const AdamWFactors f = adamw_factors(p, op);
  return {f.decay, p.beta1, p.beta2, p.eps, f.step_size, f.bias2_sqrt};
}

}  // namespace

void CudaBackend::adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                               const AdamWParams& p) {
  constexpr const char* op = "adamw_update";
  const cuda::AdamWConstants c = adamw_constants(p, op);
  require_adamw_operands(w, m, v, g, op);
  check_shape(g, w.shape(), op, "g");
  cuda::launch_adamw_update(w.raw(), g.raw(), g.dtype(), m.raw(), v.raw(), w.dtype(), w.numel(),
                            c, r_->stream);
}

void CudaBackend::adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                    const Tensor& g, const AdamWParams& p) {
  constexpr const char* op = "adamw_update_rows";
  const cuda::AdamWConstants c = adamw_constants(p, op);
  require_adamw_operands(w, m, v, g, op);
  PFC_CHECK(w.rank() == 2, "{}: w {} must be [rows, cols]", op, w.describe());
  PFC_CHECK(g.rank() == 2 && g.dim(1) == w.dim(1), "{}: g {} must be [count, {}]", op, g.describe(),
            w.dim(1));
  require_index(index, g.dim(0), op);
  cuda::launch_adamw_update_rows(w.raw(), m.raw(), v.raw(), w.dtype(), w.dim(0), w.dim(1),
                                 index.data<std::int64_t>(), g.raw(), g.dtype(), g.dim(0), c,
                                 error_flag(), kAdamWRowIndexOutOfRange, r_->stream);
}

}  // namespace pfc
