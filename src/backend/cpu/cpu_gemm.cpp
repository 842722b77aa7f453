// CPU dense algebra: GEMM through OpenBLAS (bf16 operands on oneDNN's matmul), bias addition
// and its gradient (column sums).
#include <algorithm>
#include <optional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/onednn_bf16_gemm.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// A bf16 product oneDNN computes, C = op(A) op(B) overwritten (what the token Linears ask),
// and the workspace it takes.
struct OneDnnBf16Gemm {
  cpu::Bf16GemmShape shape;
  std::int64_t workspace_bytes = 0;
};

// Another alpha or beta, or a shape oneDNN leaves to its reference kernel, is computed on the
// widened operands.
std::optional<OneDnnBf16Gemm> onednn_bf16_product(bool transpose_a, bool transpose_b,
                                                  double alpha, const Tensor& a, const Tensor& b,
                                                  double beta, const Tensor& c) {
  if (a.dtype() != DType::bf16 || alpha != 1.0 || beta != 0.0) return std::nullopt;
  const cpu::Bf16GemmShape s{transpose_a, transpose_b, c.dim(0),  c.dim(1),
                             transpose_a ? a.dim(0) : a.dim(1), a.dim(1), b.dim(1), c.dim(1)};
  const std::optional<std::int64_t> bytes = cpu::onednn_bf16_gemm_workspace_bytes(s);
  if (!bytes) return std::nullopt;
  return OneDnnBf16Gemm{s, *bytes};
}

}  // namespace

void CpuBackend::gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                      const Tensor& b, double beta, Tensor& c) {
  const auto [m, n, k] = operand_check::gemm(rules_, transpose_a, transpose_b, a, b, c);
  if (const auto fast = onednn_bf16_product(transpose_a, transpose_b, alpha, a, b, beta, c)) {
    Tensor workspace =
        Tensor::empty({fast->workspace_bytes}, DType::u8, allocator_, MemoryPurpose::workspace);
    cpu::onednn_bf16_gemm(fast->shape, a.raw(), b.raw(), c.data<float>(), workspace.raw());
    return;
  }
  if (a.dtype() == DType::f16 || a.dtype() == DType::bf16) {
    // The tensor-core contract (f16) and the CPU's bf16 products alike: an f32 GEMM of the
    // widened operands is the same arithmetic.
    gemm(transpose_a, transpose_b, alpha, widened(a), widened(b), beta, c);
    return;
  }
  if (m == 0 || n == 0) return;
  cpu::dispatch_float(a.dtype(), "gemm", "a", [&](auto tag) {
    using T = decltype(tag);
    cpu::blas_gemm(transpose_a, transpose_b, m, n, k, static_cast<T>(alpha), a.data<T>(), a.dim(1),
                   b.data<T>(), b.dim(1), static_cast<T>(beta), c.data<T>(), n);
  });
}

Tensor CpuBackend::widened(const Tensor& half) {
  Tensor wide = Tensor::host(half.shape(), DType::f32, half.purpose());
  cast(half, wide);
  return wide;
}

std::int64_t gemm_host_scratch_bytes(bool transpose_a, bool transpose_b, double alpha,
                                     const Tensor& a, const Tensor& b, double beta,
                                     const Tensor& c) {
  if (a.dtype() != DType::f16 && a.dtype() != DType::bf16) return 0;
  if (onednn_bf16_product(transpose_a, transpose_b, alpha, a, b, beta, c)) return 0;
  return (a.numel() + b.numel()) * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t gemm_workspace_bytes(bool transpose_a, bool transpose_b, double alpha,
                                  const Tensor& a, const Tensor& b, double beta, const Tensor& c) {
  const auto fast = onednn_bf16_product(transpose_a, transpose_b, alpha, a, b, beta, c);
  return fast ? fast->workspace_bytes : 0;
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
