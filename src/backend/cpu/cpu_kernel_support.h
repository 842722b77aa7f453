// What the CPU backend's kernels share: choosing the element type (f32 or f64) of a call,
// checking index values, and cblas GEMM typed by element on the OpenMP threads. Operand
// shapes, types and places are checked before, by backend/operand_checks.h.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "core/parallel_for.h"
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
void blas_block(Gemv gemv, Gemm gemm, bool ta, bool tb, std::int64_t m, std::int64_t n,
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

// A product of fewer multiply-adds than this is one BLAS call.
inline constexpr std::int64_t kGemmGrain = std::int64_t{1} << 20;
// Blocks of C start at multiples of this many rows or columns (OpenBLAS's kernel tiles divide
// it).
inline constexpr std::int64_t kGemmBlockAlign = 64;

// The product on the process's OpenMP threads: C is cut along its longer side into one block
// per thread, each a single-threaded BLAS call (OpenBLAS keeps one thread in pfc,
// app/thread_layout.h). Inside another parallel loop (attention's batch of small products) it
// is one call. OpenBLAS's sum over k for an element of C depends a little on the size of the
// call that computes it, so a product's last bits depend on the thread count; fixed blocks
// whatever the count would avoid that, but one call per thread was 7 % faster in vit_t's
// training, and a run resumes on the same count (or within fp32's own error on another).
template <class T, class Gemv, class Gemm>
void blas_gemm_with(Gemv gemv, Gemm gemm, bool ta, bool tb, std::int64_t m, std::int64_t n,
                    std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b,
                    std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (k == 0) {
    // An empty inner dimension has leading dimension 0, which BLAS rejects: C = beta * C
    // (beta == 0 overwrites, as BLAS does, so stale NaNs do not survive).
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t s = 0; s < n; ++s)
        c[r * ldc + s] = beta == T(0) ? T(0) : beta * c[r * ldc + s];
    return;
  }
  const bool by_rows = m >= n;
  const std::int64_t side = by_rows ? m : n, across = by_rows ? n : m;
  const std::int64_t blocks = (side + kGemmBlockAlign - 1) / kGemmBlockAlign;
  const std::int64_t block_work = std::max<std::int64_t>(1, kGemmBlockAlign * across * k);
  parallel_for(blocks, std::max<std::int64_t>(1, kGemmGrain / block_work),
               [&](std::int64_t first, std::int64_t last) {
                 const std::int64_t begin = first * kGemmBlockAlign;
                 const std::int64_t count = std::min(side, last * kGemmBlockAlign) - begin;
                 if (by_rows)
                   blas_block(gemv, gemm, ta, tb, count, n, k, alpha,
                              ta ? a + begin : a + begin * lda, lda, b, ldb, beta,
                              c + begin * ldc, ldc);
                 else
                   blas_block(gemv, gemm, ta, tb, m, count, k, alpha, a, lda,
                              tb ? b + begin * ldb : b + begin, ldb, beta, c + begin, ldc);
               });
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
