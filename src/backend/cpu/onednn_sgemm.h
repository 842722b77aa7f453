// One row-major f32 GEMM, C = alpha * op(A) * op(B) + beta * C, on oneDNN's own kernels
// (dnnl_sgemm): AVX-512 wherever the CPU has it, where Debian's OpenBLAS 0.3.21 runs its
// Haswell (AVX2) kernels on CPUs it does not know, such as AMD's Zen 4 and Zen 5. Attention's
// small batched products take it: 7 % of vit_t's inference. The large GEMMs of a training
// step stay on OpenBLAS, whose sums the golden comparisons were measured with: oneDNN's sum
// order there put the median error of two golden cases above arcface_torch's own.
// Inside a parallel loop it runs on the calling thread.
#pragma once

#include <cstdint>

namespace pfc::cpu {

// False, computing nothing, when pfc was built without oneDNN or oneDNN refuses the call.
bool onednn_sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                  std::int64_t ldb, float beta, float* c, std::int64_t ldc);

}  // namespace pfc::cpu
