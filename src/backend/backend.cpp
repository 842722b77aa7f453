// What every backend shares: tensors from its allocator, host copies, and the convolution
// geometry check both backends apply before computing.
#include "backend/backend.h"

#include "core/error.h"

namespace pfc {

void check_conv_geometry(const Conv2dGeometry& g, const char* op) {
  PFC_CHECK(g.batch >= 0 && g.in_h > 0 && g.in_w > 0 && g.in_channels > 0 && g.out_channels > 0,
            "{}: bad geometry batch {} input {}x{}x{} out_channels {}", op, g.batch, g.in_h, g.in_w,
            g.in_channels, g.out_channels);
  PFC_CHECK(g.kernel > 0 && g.stride > 0 && g.pad >= 0,
            "{}: bad geometry kernel {} stride {} pad {}", op, g.kernel, g.stride, g.pad);
  PFC_CHECK(g.groups > 0 && g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0,
            "{}: {} groups do not divide {} input and {} output channels", op, g.groups,
            g.in_channels, g.out_channels);
  PFC_CHECK(g.out_h() > 0 && g.out_w() > 0,
            "{}: kernel {} with pad {} does not fit the {}x{} input", op, g.kernel, g.pad, g.in_h,
            g.in_w);
}

Tensor Backend::empty(const Shape& shape, DType dtype, MemoryPurpose purpose) {
  return Tensor::empty(shape, dtype, allocator(), purpose);
}

Tensor Backend::to_host(const Tensor& x) {
  Tensor host = Tensor::host(x.shape(), x.dtype());
  copy(x, host);
  return host;
}

Tensor Backend::zeros(const Shape& shape, DType dtype, MemoryPurpose purpose) {
  Tensor t = empty(shape, dtype, purpose);
  fill(t, 0.0);
  return t;
}

}  // namespace pfc
