#include "model/flat_gradients.h"

namespace pfc {

Tensor flatten_gradients(Backend& backend, const std::vector<Parameter*>& parameters) {
  std::int64_t total = 0;
  for (const Parameter* p : parameters) {
    check_dtype(p->grad, DType::f32, "flatten_gradients", p->name.c_str());
    total += p->grad.numel();
  }
  Tensor flat = backend.zeros({total}, DType::f32, MemoryPurpose::gradients);
  std::int64_t offset = 0;
  for (Parameter* p : parameters) {
    const std::int64_t n = p->grad.numel();
    p->grad = flat.rows(offset, offset + n).reshape(p->grad.shape());
    offset += n;
  }
  return flat;
}

}  // namespace pfc
