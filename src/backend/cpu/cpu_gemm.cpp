// CPU dense algebra: GEMM through OpenBLAS, bias addition and its gradient (column sums).
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {

void CpuBackend::gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                      const Tensor& b, double beta, Tensor& c) {
  const auto [m, n, k] = operand_check::gemm(rules_, transpose_a, transpose_b, a, b, c);
  if (a.dtype() == DType::f16) {
    gemm_half_inputs(transpose_a, transpose_b, alpha, a, b, beta, c);
    return;
  }
  if (m == 0 || n == 0) return;
  cpu::dispatch_float(a.dtype(), "gemm", "a", [&](auto tag) {
    using T = decltype(tag);
    cpu::blas_gemm(transpose_a, transpose_b, m, n, k, static_cast<T>(alpha), a.data<T>(), a.dim(1),
                   b.data<T>(), b.dim(1), static_cast<T>(beta), c.data<T>(), n);
  });
}

void CpuBackend::gemm_half_inputs(bool transpose_a, bool transpose_b, double alpha,
                                  const Tensor& a, const Tensor& b, double beta, Tensor& c) {
  // f16 -> f32 is exact and so is the product of two f16 values in f32, so an f32 GEMM of
  // the widened operands is the same arithmetic as a tensor core's f16 x f16 + f32.
  auto widen = [this](const Tensor& half) {
    Tensor wide = Tensor::host(half.shape(), DType::f32, half.purpose());
    cast(half, wide);
    return wide;
  };
  gemm(transpose_a, transpose_b, alpha, widen(a), widen(b), beta, c);
}

std::int64_t gemm_host_scratch_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != DType::f16) return 0;
  return (a.numel() + b.numel()) * static_cast<std::int64_t>(sizeof(float));
}

void CpuBackend::add_row_vector(Tensor& x, const Tensor& bias) {
  const auto [rows, cols] = operand_check::add_row_vector(rules_, x, bias);
  cpu::dispatch_float(x.dtype(), "add_row_vector", "x", [&](auto tag) {
    using T = decltype(tag);
    T* px = x.data<T>();
    const T* pb = bias.data<T>();
    parallel_for(rows, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(cols, 1)),
                 [&](std::int64_t first, std::int64_t last) {
                   for (std::int64_t r = first; r < last; ++r)
                     for (std::int64_t j = 0; j < cols; ++j) px[r * cols + j] += pb[j];
                 });
  });
}

void CpuBackend::sum_rows(const Tensor& x, Tensor& out) {
  const auto [rows, cols] = operand_check::sum_rows(rules_, x, out);
  cpu::dispatch_float(x.dtype(), "sum_rows", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    std::vector<double> sum(cols, 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) sum[j] += px[r * cols + j];
    T* po = out.data<T>();
    for (std::int64_t j = 0; j < cols; ++j) po[j] = static_cast<T>(sum[j]);
  });
}

}  // namespace pfc
