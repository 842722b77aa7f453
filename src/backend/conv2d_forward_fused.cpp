// Backend::conv2d_forward_fused as the plain primitives compute it, one pass each: the
// reference every backend starts from, and the one a fused kernel is held to.
#include "backend/backend.h"

namespace pfc {

void Backend::conv2d_forward_fused(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                   const ConvEpilogue& epilogue, Tensor& y) {
  Tensor input = x;
  Tensor filter = w;
  if (w.dtype() == DType::bf16) {
    // The operands a bf16 kernel reads: x rounded to bf16 as well; every product of two bf16
    // values is exact in f32.
    Tensor rounded = x;
    if (x.dtype() != DType::bf16) {
      rounded = empty(x.shape(), DType::bf16, MemoryPurpose::workspace);
      cast(x, rounded);
    }
    input = empty(x.shape(), DType::f32, MemoryPurpose::workspace);
    cast(rounded, input);
    filter = empty(w.shape(), DType::f32, MemoryPurpose::workspace);
    cast(w, filter);
  }
  // The epilogue in the type of the products; a bf16 y is rounded to once, at the end.
  const bool in_y = !epilogue.accumulate && y.dtype() == input.dtype();
  Tensor out = in_y ? y : empty(y.shape(), input.dtype(), MemoryPurpose::workspace);
  conv2d_forward(g, input, filter, out);
  Tensor rows = out.reshape({out.numel() / g.out_channels, g.out_channels});
  if (epilogue.bias != nullptr) add_row_vector(rows, *epilogue.bias);
  if (epilogue.prelu_slope != nullptr) prelu_forward(rows, *epilogue.prelu_slope, rows);
  if (epilogue.relu6) relu6_forward(rows, rows);
  if (epilogue.accumulate)
    add(y, out, y);
  else if (!in_y)
    cast(out, y);
}

}  // namespace pfc
