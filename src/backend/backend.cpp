#include "backend/backend.h"

#include <cmath>

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

Tensor Backend::zeros(const Shape& shape, DType dtype, MemoryPurpose purpose) {
  Tensor t = empty(shape, dtype, purpose);
  fill(t, 0.0);
  return t;
}

}  // namespace pfc
