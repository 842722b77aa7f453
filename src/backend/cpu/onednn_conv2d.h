// The CPU backend's fast convolutions: oneDNN primitives on the NHWC activations and OHWI
// filters of the Backend interface, on f32 operands, or bf16 ones writing f32 (fp16 training);
// oneDNN has no f64, and the reference loops of cpu_conv2d.cpp stay the f64 path and the
// oracle. Each shape, direction and operand type is set up once and cached, as the cuDNN plans
// are: the primitive, and the reorders between pfc's OHWI filter and the layout oneDNN's
// kernel wants.
//
// Every byte oneDNN needs beside the operands comes from the caller as one workspace buffer
// (oneDNN's user-managed scratchpad plus the reordered filter), which the backend allocates
// from its own allocator as `workspace`: the memory ledger sees it and a plan models it
// (onednn_conv2d_workspace_bytes answers for both).
//
// A shape oneDNN refuses, or for which it offers only its slow reference kernel, is left to
// pfc's reference convolution; the first time, a warning names the direction and the shape.
// Built without oneDNN (PFC_ONEDNN=OFF), nothing is fast and everything runs on the reference.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/backend.h"

namespace pfc::cpu {

enum class ConvDirection { forward, backward_data, backward_filter };

// "conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter".
const char* conv_direction_name(ConvDirection direction);

// Whether pfc was built with oneDNN (PFC_ONEDNN); without it the functions below leave every
// shape to the reference.
bool onednn_built();

// False for the shapes whose oneDNN kernels are not trusted (strided 1x1 convolutions with
// channel counts that are not multiples of 16, planes of 2^31 pixels or more): those run on
// the reference.
bool onednn_trusted_shape(const Conv2dGeometry& g);

// The workspace bytes oneDNN needs to compute this convolution on `operands` (f32, or bf16
// with an f32 result), or nothing when it leaves the shape to the reference loops (then warns
// once).
std::optional<std::int64_t> onednn_conv2d_workspace_bytes(const Conv2dGeometry& g,
                                                         ConvDirection direction,
                                                         DType operands = DType::f32);

// Computes the convolution for which onednn_conv2d_workspace_bytes answered, on NHWC / OHWI
// data: forward (a = x, b = w, out = y), backward_data (a = dy, b = w, out = dx),
// backward_filter (a = x, b = dy, out = dw). a and b are of `operands` (f32 or bf16); out is
// f32, the products accumulated in f32. `workspace` holds at least that many bytes, aligned
// to 64. `prepared_filter` (f32 only), when given for forward or backward_data, is w already
// in the primitive's layout (onednn_prepare_filter), and b is not read.
void onednn_conv2d(const Conv2dGeometry& g, ConvDirection direction, DType operands,
                   const void* a, const void* b, float* out, void* workspace,
                   const void* prepared_filter = nullptr);

// The filter w of a forward or backward_data call in its primitive's own layout: its bytes (0
// when the primitive reads pfc's OHWI as it is) and which layout it is (the same `id` for the
// same layout, e.g. every call of one shape). An inference command keeps the prepared filter
// between calls instead of reordering the unchanged filter every time: at one image per
// forward, the reorders of iresnet-50's filters took a fifth of the time.
struct PreparedFilterLayout {
  std::int64_t bytes = 0;
  const void* id = nullptr;
};
PreparedFilterLayout onednn_prepared_filter_layout(const Conv2dGeometry& g,
                                                   ConvDirection direction);
// Reorders w into `prepared` (the layout's bytes, aligned to 64), using
// `workspace` (onednn_conv2d_workspace_bytes) as the reorder's scratchpad.
void onednn_prepare_filter(const Conv2dGeometry& g, ConvDirection direction, const float* w,
                           void* prepared, void* workspace);

}  // namespace pfc::cpu
