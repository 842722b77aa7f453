// What every backend shares: tensors from its allocator, host copies, and the convolution
// geometry check both backends apply before computing.
#include "backend/backend.h"

#include "core/error.h"
#include "core/host_cast.h"

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

void Backend::copy_cast(const Tensor& src, Tensor& dst) {
  if (src.dtype() == dst.dtype()) {
    copy(src, dst);
  } else if (src.device() == device() && dst.device() == device()) {
    cast(src, dst);
  } else if (src.device() == DeviceKind::cpu && dst.device() == DeviceKind::cpu) {
    host_cast(src, dst);
  } else if (src.device() == DeviceKind::cpu) {
    // Converted on the host, then moved: the staging tensor is plain host memory, which a
    // copy to the device may read after it returns.
    Tensor staged = Tensor::host(src.shape(), dst.dtype());
    host_cast(src, staged);
    copy(staged, dst);
  } else {
    Tensor staged = to_host(src);
    host_cast(staged, dst);
  }
}

Tensor Backend::zeros(const Shape& shape, DType dtype, MemoryPurpose purpose) {
  Tensor t = empty(shape, dtype, purpose);
  fill(t, 0.0);
  return t;
}

}  // namespace pfc
