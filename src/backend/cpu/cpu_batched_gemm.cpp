// CPU batched GEMM (attention's q kᵀ and scores × v): the matrices of the batch split over the
// OpenMP threads, each product on one. f32 through oneDNN's sgemm (OpenBLAS without oneDNN);
// f64 on the plain loops below, accumulated in f64 in a fixed order: the oracle the f32 path
// is tested against, and what an f64 run (the golden comparisons, the gradient checks)
// computes with. bf16 operands (bf16 inference) run as one oneDNN matmul over the whole batch
// (onednn_bf16_gemm.h), or, where oneDNN has no fast kernel for it, as the f32 products of the
// operands widened, which are exact.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <type_traits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/onednn_bf16_gemm.h"
#include "backend/cpu/onednn_sgemm.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// Element (row, col) of op(m), m stored with rows `ld` apart.
template <class T>
T op_element(const T* m, std::int64_t ld, bool transpose, std::int64_t row, std::int64_t col) {
  return transpose ? m[col * ld + row] : m[row * ld + col];
}

template <class T>
void reference_product(const BatchedGemmGeometry& g, double alpha, const T* a, const T* b,
                       double beta, T* c) {
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p)
        sum += static_cast<double>(op_element(a, g.a.ld, g.transpose_a, i, p)) *
               op_element(b, g.b.ld, g.transpose_b, p, j);
      T& out = c[i * g.c.ld + j];
      // beta == 0 overwrites, as BLAS does, so stale NaNs do not survive.
      out = static_cast<T>(alpha * sum + (beta == 0.0 ? 0.0 : beta * out));
    }
}

// One f32 product: oneDNN's kernels (onednn_sgemm.h), or the BLAS wrapper's without oneDNN
// and for an empty inner dimension (cpu_kernel_support.h scales c by beta then).
void blas_product(const BatchedGemmGeometry& g, double alpha, const float* a, const float* b,
                  double beta, float* c) {
  const auto fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
  if (g.k == 0 || !cpu::onednn_sgemm(g.transpose_a, g.transpose_b, g.m, g.n, g.k, fa, a, g.a.ld,
                                     b, g.b.ld, fb, c, g.c.ld))
    cpu::blas_gemm(g.transpose_a, g.transpose_b, g.m, g.n, g.k, fa, a, g.a.ld, b, g.b.ld, fb, c,
                   g.c.ld);
}

std::int64_t matrix_offset(const MatrixBatchLayout& l, std::int64_t i, std::int64_t j) {
  return l.offset + i * l.outer_stride + j * l.inner_stride;
}

// The batch as one oneDNN bf16 matmul; beta must be 0 (c overwritten).
cpu::Bf16GemmShape bf16_shape(const BatchedGemmGeometry& g, double alpha) {
  cpu::Bf16GemmShape s;
  s.transpose_a = g.transpose_a;
  s.transpose_b = g.transpose_b;
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.lda = g.a.ld;
  s.ldb = g.b.ld;
  s.ldc = g.c.ld;
  s.alpha = static_cast<float>(alpha);
  s.outer = g.outer;
  s.inner = g.inner;
  s.a_outer_stride = g.a.outer_stride;
  s.a_inner_stride = g.a.inner_stride;
  s.b_outer_stride = g.b.outer_stride;
  s.b_inner_stride = g.b.inner_stride;
  s.c_outer_stride = g.c.outer_stride;
  s.c_inner_stride = g.c.inner_stride;
  return s;
}

}  // namespace

void CpuBackend::batched_gemm(const BatchedGemmGeometry& g, double alpha, const Tensor& a,
                              const Tensor& b, double beta, Tensor& c) {
  operand_check::batched_gemm(rules_, g, a, b, c);
  if (g.m == 0 || g.n == 0) return;
  if (a.dtype() == DType::bf16) {
    const cpu::Bf16GemmShape s = bf16_shape(g, alpha);
    const std::optional<std::int64_t> bytes =
        beta == 0.0 && g.k > 0 ? cpu::onednn_bf16_gemm_workspace_bytes(s) : std::nullopt;
    if (bytes) {
      Tensor workspace = Tensor::empty({*bytes}, DType::u8, allocator_, MemoryPurpose::workspace);
      const std::size_t bf16 = dtype_size(DType::bf16);
      cpu::onednn_bf16_gemm(s, static_cast<const std::byte*>(a.raw()) + g.a.offset * bf16,
                            static_cast<const std::byte*>(b.raw()) + g.b.offset * bf16,
                            c.data<float>() + g.c.offset, workspace.raw());
    } else {
      batched_gemm(g, alpha, widened(a), widened(b), beta, c);
    }
    return;
  }
  cpu::dispatch_float(a.dtype(), "batched_gemm", "a", [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = c.data<T>();
    const std::int64_t count = g.outer * g.inner;
    // The matrices of c are disjoint, so they split over the threads, each product on one.
    const std::int64_t work = std::max<std::int64_t>(1, g.m * g.n * std::max<std::int64_t>(g.k, 1));
    parallel_for(count, std::max<std::int64_t>(1, kElementGrain / work),
                 [&](std::int64_t first, std::int64_t last) {
                   for (std::int64_t q = first; q < last; ++q) {
                     const std::int64_t i = q / g.inner, j = q % g.inner;
                     const T* qa = pa + matrix_offset(g.a, i, j);
                     const T* qb = pb + matrix_offset(g.b, i, j);
                     T* qc = pc + matrix_offset(g.c, i, j);
                     if constexpr (std::is_same_v<T, double>)
                       reference_product(g, alpha, qa, qb, beta, qc);
                     else
                       blas_product(g, alpha, qa, qb, beta, qc);
                   }
                 });
  });
}

}  // namespace pfc
