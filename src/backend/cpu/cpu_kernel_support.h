// What the CPU backend's kernels share: choosing the element type (f32 or f64) of a call,
// checking that operands live on the host, and cblas GEMM typed by element.
#pragma once

#include <cblas.h>

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

inline void check_host(const Tensor& t, const char* op, const char* operand) {
  PFC_CHECK(t.defined(), "{}: {} is an undefined tensor", op, operand);
  PFC_CHECK(t.device() == DeviceKind::cpu, "{}: {} {} is not a host tensor", op, operand,
            t.describe());
}

// t is a host tensor of ref's shape and dtype.
inline void check_like(const Tensor& t, const Tensor& ref, const char* op, const char* operand) {
  check_host(t, op, operand);
  check_shape(t, ref.shape(), op, operand);
  check_dtype(t, ref.dtype(), op, operand);
}

inline void check_rank(const Tensor& t, std::size_t rank, const char* op, const char* operand) {
  PFC_CHECK(t.rank() == rank, "{}: {} has shape {}, expected rank {}", op, operand,
            shape_string(t.shape()), rank);
}

// Row-major C = alpha * op(A) * op(B) + beta * C with C [m, n] and op(A) [m, k].
inline void blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                      const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                      float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

inline void blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      double alpha, const double* a, std::int64_t lda, const double* b,
                      std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// Rows of an index tensor (i64 [n]) checked against the number of rows they address.
inline const std::int64_t* checked_indices(const Tensor& index, std::int64_t limit,
                                           const char* op) {
  check_host(index, op, "index");
  check_dtype(index, DType::i64, op, "index");
  check_rank(index, 1, op, "index");
  const std::int64_t* idx = index.data<std::int64_t>();
  for (std::int64_t i = 0; i < index.numel(); ++i)
    PFC_CHECK(idx[i] >= 0 && idx[i] < limit, "{}: index[{}] = {} is outside [0, {})", op, i, idx[i],
              limit);
  return idx;
}

// The operands of an optimiser's row update: w [rows, cols] on the host, g [index size, cols]
// of w's type, index within w's rows. Returns the checked indices. (The caller checks that
// the optimiser's state is shaped like w.)
inline const std::int64_t* checked_row_update(const Tensor& w, const Tensor& index,
                                              const Tensor& g, const char* op) {
  check_host(w, op, "w");
  check_rank(w, 2, op, "w");
  check_host(g, op, "g");
  check_shape(g, {index.numel(), w.dim(1)}, op, "g");
  check_dtype(g, w.dtype(), op, "g");
  return checked_indices(index, w.dim(0), op);
}

// keep: the u8 mask of inter-class filtering, on the host, shaped like `like`.
inline void check_keep_mask(const Tensor& keep, const Tensor& like, const char* op) {
  check_host(keep, op, "keep");
  check_shape(keep, like.shape(), op, "keep");
  check_dtype(keep, DType::u8, op, "keep");
}

}  // namespace pfc::cpu
