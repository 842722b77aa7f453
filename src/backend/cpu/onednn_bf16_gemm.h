// One row-major GEMM on bf16 operands, C = op(A) * op(B) written as f32, on oneDNN's matmul
// primitive: AVX512_BF16 or AMX where the CPU has them, the products accumulated in f32. The
// token Linears of a Vision Transformer take it in fp16 training (bf16 products on the CPU).
// As the convolutions' (onednn_conv2d.h), each shape is set up once and cached, and the
// primitive's scratchpad comes from the caller's workspace, which the backend allocates as
// `workspace` so that the memory ledger and a plan count it.
#pragma once

#include <cstdint>
#include <optional>

namespace pfc::cpu {

// A GEMM's shape: op(A) [m, k], op(B) [k, n], C [m, n], each row-major with its leading
// dimension.
struct Bf16GemmShape {
  bool transpose_a = false, transpose_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
};

// The workspace bytes oneDNN needs for this product, or nothing when pfc was built without
// oneDNN or it offers only its reference kernel for it (the backend then computes on the
// operands widened to f32).
std::optional<std::int64_t> onednn_bf16_gemm_workspace_bytes(const Bf16GemmShape& s);

// C = op(A) * op(B) (overwritten) for a shape onednn_bf16_gemm_workspace_bytes answered; a and
// b point to bf16 values, `workspace` to at least that many bytes aligned to 64.
void onednn_bf16_gemm(const Bf16GemmShape& s, const void* a, const void* b, float* c,
                      void* workspace);

}  // namespace pfc::cpu
