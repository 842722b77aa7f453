// A row-major GEMM on bf16 operands, C = alpha op(A) op(B) written as f32, or a strided batch
// of them, on oneDNN's matmul primitive: AVX512_BF16 or AMX where the CPU has them, the
// products accumulated in f32. The token Linears of a Vision Transformer take it in fp16
// training (bf16 products on the CPU), and attention's batched products in bf16 inference.
// As the convolutions' (onednn_conv2d.h), each shape is set up once and cached, and the
// primitive's scratchpad comes from the caller's workspace, which the backend allocates as
// `workspace` so that the memory ledger and a plan count it.
#pragma once

#include <cstdint>
#include <optional>

namespace pfc::cpu {

// A GEMM's shape: op(A) [m, k], op(B) [k, n], C [m, n], each row-major with its leading
// dimension; and, for a batch, outer x inner such products, the matrices of each operand
// those strides apart (in elements).
struct Bf16GemmShape {
  bool transpose_a = false, transpose_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f;
  std::int64_t outer = 1, inner = 1;
  std::int64_t a_outer_stride = 0, a_inner_stride = 0, b_outer_stride = 0, b_inner_stride = 0,
               c_outer_stride = 0, c_inner_stride = 0;

  bool batched() const { return outer * inner > 1; }
};

// The workspace bytes oneDNN needs for this product, or nothing when pfc was built without
// oneDNN or it offers only its reference kernel for it (the backend then computes on the
// operands widened to f32).
std::optional<std::int64_t> onednn_bf16_gemm_workspace_bytes(const Bf16GemmShape& s);

// C = alpha op(A) op(B) (overwritten), each matrix of a batch, for a shape
// onednn_bf16_gemm_workspace_bytes answered; a and b point to bf16 values (their first
// matrices), `workspace` to at least that many bytes aligned to 64.
void onednn_bf16_gemm(const Bf16GemmShape& s, const void* a, const void* b, float* c,
                      void* workspace);

}  // namespace pfc::cpu
