// What every layer needs to run: the backend it computes on and the element type of the
// activations between layers: f32; f16 in the CUDA backend's fp16 mode; f64 for the CPU
// reference that judges how exact a golden file itself is.
#pragma once

#include "backend/backend.h"
#include "model/forward_mode.h"

namespace pfc {

struct ModelContext {
  Backend* backend = nullptr;
  DType activation_dtype = DType::f32;

  // Convolutions and the fc GEMM read a working copy of the f32 master weights in the
  // activation type (f16 or f64) and produce their weight gradients in it.
  bool uses_working_copies() const { return activation_dtype != DType::f32; }
  // The type of the head (fc and the features batch-norm), kept in f32 as arcface_torch does
  // even in fp16 mode; f64 in the reference mode.
  DType head_dtype() const { return activation_dtype == DType::f64 ? DType::f64 : DType::f32; }
  Tensor activation(const Shape& shape) const {
    return backend->empty(shape, activation_dtype, MemoryPurpose::activations);
  }
};

}  // namespace pfc
