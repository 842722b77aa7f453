#include "backend/cuda/cublas_gemm.h"

#include <algorithm>

#include "backend/cuda/cuda_check.h"
#include "core/error.h"

namespace pfc::cuda {

namespace {

cudaDataType_t cuda_type(DType dtype) { return dtype == DType::f16 ? CUDA_R_16F : CUDA_R_32F; }

}  // namespace

void cublas_gemm(cublasHandle_t handle, bool transpose_a, bool transpose_b, double alpha,
                 const Tensor& a, const Tensor& b, double beta, Tensor& c) {
  PFC_CHECK(a.rank() == 2 && b.rank() == 2 && c.rank() == 2,
            "gemm: operands must be matrices, got a {}, b {}, c {}", a.describe(), b.describe(),
            c.describe());
  const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
  const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  const std::int64_t kb = transpose_b ? b.dim(1) : b.dim(0);
  const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  PFC_CHECK(k == kb, "gemm: inner dimensions differ: op(a) is [{}, {}], op(b) is [{}, {}]", m, k,
            kb, n);
  check_shape(c, {m, n}, "gemm", "c");

  const bool all_f32 =
      a.dtype() == DType::f32 && b.dtype() == DType::f32 && c.dtype() == DType::f32;
  const bool half_inputs = a.dtype() == DType::f16 && b.dtype() == DType::f16 &&
                           (c.dtype() == DType::f16 || c.dtype() == DType::f32);
  PFC_CHECK(all_f32 || half_inputs,
            "gemm: unsupported dtypes a {}, b {}, c {} (allowed: f32/f32/f32, f16/f16/f16, "
            "f16/f16/f32)",
            dtype_name(a.dtype()), dtype_name(b.dtype()), dtype_name(c.dtype()));
  if (m == 0 || n == 0) return;

  // Pedantic f32 keeps fp32 parity (no TF32, no reduced-precision split-K); f16 inputs use
  // tensor cores and accumulate in f32.
  const cublasComputeType_t compute = all_f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  const float alpha_f = static_cast<float>(alpha);
  const float beta_f = static_cast<float>(beta);
  // Column-major view: c^T [n, m] = op(b)^T [n, k] * op(a)^T [k, m]; each row-major buffer
  // read column-major is its own transpose, so the transpose flags carry over unchanged.
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  // cuBLAS's 64-bit entry point: the class-centre shards of the largest plans hold more than
  // 2^31 elements ([5.17M, 512] in f16 on one H200), past what the int API's index arithmetic
  // is specified for.
  const std::int64_t ldb = std::max<std::int64_t>(1, b.dim(1));
  const std::int64_t lda = std::max<std::int64_t>(1, a.dim(1));
  const std::int64_t ldc = std::max<std::int64_t>(1, n);
  PFC_CHECK_CUBLAS(cublasGemmEx_64(handle, op_b, op_a, n, m, k, &alpha_f, b.raw(),
                                   cuda_type(b.dtype()), ldb, a.raw(), cuda_type(a.dtype()), lda,
                                   &beta_f, c.raw(), cuda_type(c.dtype()), ldc, compute,
                                   CUBLAS_GEMM_DEFAULT));
}

}  // namespace pfc::cuda
