#include "backend/backend.h"

#include <cmath>

#include "core/host_cast.h"

namespace pfc {

AdamWFactors adamw_factors(const AdamWParams& p, const char* op) {
  PFC_CHECK(p.step >= 1, "{}: step {} must be at least 1 (the bias correction's t)", op, p.step);
  PFC_CHECK(p.beta1 >= 0 && p.beta1 < 1 && p.beta2 >= 0 && p.beta2 < 1,
            "{}: betas ({}, {}) must be in [0, 1)", op, p.beta1, p.beta2);
  const double t = static_cast<double>(p.step);
  return {1.0 - p.lr * p.weight_decay, p.lr / (1.0 - std::pow(p.beta1, t)),
          std::sqrt(1.0 - std::pow(p.beta2, t))};
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
