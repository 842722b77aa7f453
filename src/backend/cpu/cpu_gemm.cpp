// CPU dense algebra: GEMM through OpenBLAS, bias addition and its gradient (column sums).
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"

namespace pfc {

void CpuBackend::gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                      const Tensor& b, double beta, Tensor& c) {
  const char* op = "gemm";
  cpu::check_host(a, op, "a");
  cpu::check_host(b, op, "b");
  cpu::check_host(c, op, "c");
  cpu::check_rank(a, 2, op, "a");
  cpu::check_rank(b, 2, op, "b");
  check_dtype(b, a.dtype(), op, "b");
  if (a.dtype() == DType::f16) {
    gemm_half_inputs(transpose_a, transpose_b, alpha, a, b, beta, c);
    return;
  }
  check_dtype(c, a.dtype(), op, "c");
  const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
  const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  const std::int64_t kb = transpose_b ? b.dim(1) : b.dim(0);
  const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  PFC_CHECK(k == kb,
            "gemm: inner dimensions differ: op(a) of {} is [{}, {}], op(b) of {} is "
            "[{}, {}]",
            a.describe(), m, k, b.describe(), kb, n);
  check_shape(c, {m, n}, op, "c");
  if (m == 0 || n == 0) return;
  cpu::dispatch_float(a.dtype(), op, "a", [&](auto tag) {
    using T = decltype(tag);
    T* pc = c.data<T>();
    if (k == 0) {
      // An empty inner dimension has leading dimension 0, which BLAS rejects: C = beta * C
      // (beta == 0 overwrites, as BLAS does, so stale NaNs do not survive).
      for (std::int64_t i = 0; i < m * n; ++i)
        pc[i] = beta == 0.0 ? T(0) : static_cast<T>(beta) * pc[i];
      return;
    }
    cpu::blas_gemm(transpose_a, transpose_b, m, n, k, static_cast<T>(alpha), a.data<T>(), a.dim(1),
                   b.data<T>(), b.dim(1), static_cast<T>(beta), pc, n);
  });
}

void CpuBackend::gemm_half_inputs(bool transpose_a, bool transpose_b, double alpha,
                                  const Tensor& a, const Tensor& b, double beta, Tensor& c) {
  check_dtype(c, DType::f32, "gemm", "c (with f16 a and b)");
  // f16 -> f32 is exact and so is the product of two f16 values in f32, so an f32 GEMM of
  // the widened operands is the same arithmetic as a tensor core's f16 x f16 + f32.
  auto widen = [this](const Tensor& half) {
    Tensor wide = Tensor::host(half.shape(), DType::f32, half.purpose());
    cast(half, wide);
    return wide;
  };
  gemm(transpose_a, transpose_b, alpha, widen(a), widen(b), beta, c);
}

void CpuBackend::add_row_vector(Tensor& x, const Tensor& bias) {
  const char* op = "add_row_vector";
  cpu::check_host(x, op, "x");
  cpu::check_host(bias, op, "bias");
  cpu::check_rank(x, 2, op, "x");
  check_shape(bias, {x.dim(1)}, op, "bias");
  check_dtype(bias, x.dtype(), op, "bias");
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t rows = x.dim(0), cols = x.dim(1);
    T* px = x.data<T>();
    const T* pb = bias.data<T>();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) px[r * cols + j] += pb[j];
  });
}

void CpuBackend::sum_rows(const Tensor& x, Tensor& out) {
  const char* op = "sum_rows";
  cpu::check_host(x, op, "x");
  cpu::check_host(out, op, "out");
  cpu::check_rank(x, 2, op, "x");
  check_shape(out, {x.dim(1)}, op, "out");
  check_dtype(out, x.dtype(), op, "out");
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t rows = x.dim(0), cols = x.dim(1);
    const T* px = x.data<T>();
    std::vector<double> sum(cols, 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) sum[j] += px[r * cols + j];
    T* po = out.data<T>();
    for (std::int64_t j = 0; j < cols; ++j) po[j] = static_cast<T>(sum[j]);
  });
}

}  // namespace pfc
