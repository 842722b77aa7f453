#include "backend/cuda/cublas_batched_gemm.h"

#include "backend/cuda/cuda_check.h"
#include "core/error.h"

namespace pfc::cuda {

namespace {

// A pointer to element `offset` of t's values.
const void* at(const Tensor& t, std::int64_t offset) {
  return static_cast<const char*>(t.raw()) + offset * static_cast<std::int64_t>(dtype_size(t.dtype()));
}

}  // namespace

void cublas_batched_gemm(cublasHandle_t handle, const BatchedGemmGeometry& g, double alpha,
                         const Tensor& a, const Tensor& b, double beta, Tensor& c) {
  PFC_CHECK(a.dtype() == b.dtype() && a.dtype() == c.dtype() &&
                (a.dtype() == DType::f32 || a.dtype() == DType::f16),
            "batched_gemm: unsupported dtypes a {}, b {}, c {} (allowed: all f32 or all f16)",
            dtype_name(a.dtype()), dtype_name(b.dtype()), dtype_name(c.dtype()));
  if (g.m == 0 || g.n == 0) return;
  const cudaDataType_t type = a.dtype() == DType::f16 ? CUDA_R_16F : CUDA_R_32F;
  const cublasComputeType_t compute =
      a.dtype() == DType::f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  const float alpha_f = static_cast<float>(alpha);
  const float beta_f = static_cast<float>(beta);
  const cublasOperation_t op_a = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Loop over the shorter level; one strided batch over the longer.
  const bool loop_outer = g.outer <= g.inner;
  const std::int64_t loops = loop_outer ? g.outer : g.inner;
  const std::int64_t batch = loop_outer ? g.inner : g.outer;
  auto loop_stride = [&](const MatrixBatchLayout& l) {
    return loop_outer ? l.outer_stride : l.inner_stride;
  };
  auto batch_stride = [&](const MatrixBatchLayout& l) {
    return loop_outer ? l.inner_stride : l.outer_stride;
  };
  void* c_base = c.raw();
  for (std::int64_t i = 0; i < loops; ++i) {
    const void* pa = at(a, g.a.offset + i * loop_stride(g.a));
    const void* pb = at(b, g.b.offset + i * loop_stride(g.b));
    void* pc = static_cast<char*>(c_base) + (g.c.offset + i * loop_stride(g.c)) *
                                                static_cast<std::int64_t>(dtype_size(c.dtype()));
    // operand_checks.h has checked every dimension, leading dimension and the batch against
    // cuBLAS's int.
    PFC_CHECK_CUBLAS(cublasGemmStridedBatchedEx(
        handle, op_b, op_a, static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k),
        &alpha_f, pb, type, static_cast<int>(g.b.ld), batch_stride(g.b), pa, type,
        static_cast<int>(g.a.ld), batch_stride(g.a), &beta_f, pc, type, static_cast<int>(g.c.ld),
        batch_stride(g.c), static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace pfc::cuda
