#include "backend/backend.h"

namespace pfc {

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
