// What the CPU backend's kernels share: choosing the element type (f32 or f64) of a call,
// checking index values, and cblas GEMM typed by element. Operand shapes, types and places are
// checked before, by backend/operand_checks.h.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "core/tensor.h"

namespace pfc::cpu {

// Calls f(T{}) with T = float or double for dtype t; the CPU backend computes in nothing else.
template <class F>
decltype(auto) dispatch_float(DType t, const char* op, const char* operand, F&& f) {
  switch (t) {
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    default:
      throw Error(fmt::format("{}: {} is {}, the cpu backend computes in f32 or f64", op, operand,
                              dtype_name(t)));
  }
}

// Calls f(P{}) for a per-channel parameter tensor: f32 (the model's master weights) or the
// activation type T (f64 in an f64 run, and when the gradient checker runs everything in f64).
template <class T, class F>
decltype(auto) dispatch_param(DType t, const char* op, const char* operand, F&& f) {
  if (t == DType::f32) return f(float{});
  PFC_CHECK(t == dtype_of<T>::value, "{}: {} is {}, expected f32 or {}", op, operand, dtype_name(t),
            dtype_name(dtype_of<T>::value));
  return f(T{});
}

// Row-major C = alpha * op(A) * op(B) + beta * C with C [m, n] and op(A) [m, k], through the
// element type's cblas ?gemv and ?gemm. One row of C (an embedding head at one image per
// forward) is a matrix-vector product: OpenBLAS's GEMM would first copy all of B into its
// packed layout, which took as long as the product.
template <class T, class Gemv, class Gemm>
void blas_gemm_with(Gemv gemv, Gemm gemm, bool ta, bool tb, std::int64_t m, std::int64_t n,
                    std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b,
                    std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m == 1) {
    if (beta == 0) std::fill(c, c + n, T(0));  // gemv scales y by beta: no stale NaN through 0
    gemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, static_cast<int>(tb ? n : k),
         static_cast<int>(tb ? k : n), alpha, b, static_cast<int>(ldb), a,
         ta ? static_cast<int>(lda) : 1, beta, c, 1);
    return;
  }
  gemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
       static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
       static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

inline void blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                      const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                      float beta, float* c, std::int64_t ldc) {
  blas_gemm_with(cblas_sgemv, cblas_sgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

inline void blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      double alpha, const double* a, std::int64_t lda, const double* b,
                      std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  blas_gemm_with(cblas_dgemv, cblas_dgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The entries of an index tensor (i64 [n], checked) against the number of rows they address.
inline const std::int64_t* checked_indices(const Tensor& index, std::int64_t limit,
                                           const char* op) {
  const std::int64_t* idx = index.data<std::int64_t>();
  for (std::int64_t i = 0; i < index.numel(); ++i)
    PFC_CHECK(idx[i] >= 0 && idx[i] < limit, "{}: index[{}] = {} is outside [0, {})", op, i, idx[i],
              limit);
  return idx;
}

// The same for an index that must also be sorted and unique (a sparse gradient's rows).
inline const std::int64_t* checked_sorted_indices(const Tensor& index, std::int64_t limit,
                                                  const char* op) {
  const std::int64_t* idx = checked_indices(index, limit, op);
  for (std::int64_t i = 1; i < index.numel(); ++i)
    PFC_CHECK(idx[i - 1] < idx[i], "{}: index[{}] = {} follows {}: the rows must be sorted and unique",
              op, i, idx[i], idx[i - 1]);
  return idx;
}

}  // namespace pfc::cpu
