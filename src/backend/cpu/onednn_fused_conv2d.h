// The CPU backend's fused inference convolution (Backend::conv2d_forward_fused): one oneDNN
// forward-inference convolution whose bias, PReLU and residual sum are its own bias and
// post-ops, so the output is written once instead of being read and written again by each
// pass after it. In f32, or with bf16 operands (the filter kept in bf16, an f32 x converted on
// the way in) and f32 accumulation where the CPU has bf16 instructions; the output then f32,
// or bf16 for a reader that takes bf16 (the next convolution, attention's products).
//
// As for the plain convolutions (onednn_conv2d.h), each shape is set up once, every byte
// oneDNN needs comes from the caller's workspace, and a shape oneDNN refuses or leaves to its
// reference kernel is answered with nothing: the backend then runs the reference composition.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/cpu/onednn_conv2d.h"

namespace pfc::cpu {

// One fused convolution: its geometry, the type of its operands and which epilogue it has.
struct FusedConv {
  Conv2dGeometry geometry;
  bool bf16 = false;         // x and w in bf16, accumulation in f32
  bool bf16_input = false;   // x given in bf16 (else f32, converted when bf16)
  bool bf16_output = false;  // y written in bf16 (else f32); not with accumulate
  bool bias = false;
  bool prelu = false;
  bool relu6 = false;
  bool accumulate = false;

  // The operand types and the epilogue as one bit each: what tells its plans, and its kept
  // filters, apart from another's of the same geometry.
  int variant() const {
    return (bf16 ? 1 : 0) | (bias ? 2 : 0) | (prelu ? 4 : 0) | (accumulate ? 8 : 0) |
           (relu6 ? 16 : 0) | (bf16_input ? 32 : 0) | (bf16_output ? 64 : 0);
  }
};

// Whether oneDNN computes bf16 convolutions with the CPU's own bf16 instructions here
// (AVX512_BF16 or AMX): the only place pfc offers bf16 inference.
bool onednn_bf16_native();

// The workspace bytes of this convolution (the reordered filter, an f32 x converted to bf16,
// oneDNN's scratchpad), or nothing when the reference runs it.
std::optional<std::int64_t> onednn_fused_conv2d_workspace_bytes(const FusedConv& c);

// Computes it: y (+)= epilogue(conv(x, w)). x and y are of the types c names; w is OHWI
// (GOHWI grouped), f32 or bf16 as c.bf16 says, unless `prepared_filter`
// (onednn_fused_prepare_filter) is given, when w is not read; bias and slope are
// [out_channels] f32 (null when not in c).
void onednn_fused_conv2d(const FusedConv& c, const void* x, const void* w, const float* bias,
                         const float* slope, void* y, void* workspace,
                         const void* prepared_filter);

// The filter in the primitive's own layout, kept by an inference command between calls (as
// onednn_prepared_filter_layout for the plain forward).
PreparedFilterLayout onednn_fused_prepared_filter_layout(const FusedConv& c);
void onednn_fused_prepare_filter(const FusedConv& c, const void* w, void* prepared,
                                 void* workspace);

}  // namespace pfc::cpu
