// What every layer needs to run: the backend it computes on and the element type of the
// activations between layers (f32, or f16 in the CUDA backend's fp16 mode).
#pragma once

#include "backend/backend.h"

namespace pfc {

struct ModelContext {
  Backend* backend = nullptr;
  DType activation_dtype = DType::f32;

  bool half() const { return activation_dtype == DType::f16; }
  Tensor activation(const Shape& shape) const {
    return backend->empty(shape, activation_dtype, MemoryPurpose::activations);
  }
};

}  // namespace pfc
