// What every layer needs to run: the backend it computes on and the element type of the
// activations between layers: f32; f16 in the CUDA backend's fp16 mode; f64 in an f64 run
// (the CPU backend's exact-arithmetic mode), where everything else is f64 too.
#pragma once

#include "backend/backend.h"
#include "core/error.h"
#include "model/forward_mode.h"

namespace pfc {

struct ModelContext {
  Backend* backend = nullptr;
  DType activation_dtype = DType::f32;

  // The type of the master weights, their gradients and optimiser state, the batch-norm
  // statistics and running buffers: f32, as arcface_torch keeps them under autocast, or f64
  // when the whole run is f64 (an f64 run rounds nothing to f32 anywhere).
  DType master_dtype() const {
    return activation_dtype == DType::f64 ? DType::f64 : DType::f32;
  }
  // Convolutions read an f16 working copy of their masters in fp16 mode and produce their
  // weight gradients in f16.
  bool uses_working_copies() const { return activation_dtype != master_dtype(); }
  // The type of the head (fc and the features batch-norm), kept in the master type as
  // arcface_torch does even in fp16 mode.
  DType head_dtype() const { return master_dtype(); }
  Tensor activation(const Shape& shape) const {
    return backend->empty(shape, activation_dtype, MemoryPurpose::activations);
  }
};

// A network's context on `backend`; activations other than f16, f32 and f64 are an error that
// names the network.
inline ModelContext network_context(Backend& backend, DType activations, const char* network) {
  PFC_CHECK(activations == DType::f16 || activations == DType::f32 || activations == DType::f64,
            "{} activations must be f16, f32 or f64, got {}", network, dtype_name(activations));
  return ModelContext{&backend, activations};
}

}  // namespace pfc
