// What every layer needs to run: the backend it computes on, the element type of the
// activations between layers (f32; f16 in the CUDA backend's fp16 mode; f64 in an f64 run, the
// CPU backend's exact-arithmetic mode, where everything else is f64 too) and that of the
// operands of its convolutions and token Linears.
#pragma once

#include "backend/backend.h"
#include "core/error.h"
#include "model/forward_mode.h"

namespace pfc {

// The element types a network computes in: its activations between layers, and the operands
// of its convolutions and token Linears, whose products accumulate in at least f32. Both are
// one type (f32; f16 in the CUDA backend's fp16 mode; f64 in an f64 run), or bf16 products
// beside f32 activations (the CPU backend's fp16 mode).
struct NetworkPrecision {
  DType activations = DType::f32;
  DType products = DType::f32;

  NetworkPrecision() = default;
  // One type for both.
  NetworkPrecision(DType both) : activations(both), products(both) {}  // NOLINT: implicit
  NetworkPrecision(DType activations_type, DType products_type)
      : activations(activations_type), products(products_type) {}
};

struct ModelContext {
  Backend* backend = nullptr;
  DType activation_dtype = DType::f32;
  // The operands of convolutions and token Linears (NetworkPrecision::products).
  DType product_dtype = DType::f32;

  ModelContext() = default;
  // Products of the activations' type.
  ModelContext(Backend* on, DType activations)
      : backend(on), activation_dtype(activations), product_dtype(activations) {}
  ModelContext(Backend* on, DType activations, DType products)
      : backend(on), activation_dtype(activations), product_dtype(products) {}

  // The type of the master weights, their gradients and optimiser state, the batch-norm
  // statistics and running buffers: f32, as arcface_torch keeps them under autocast, or f64
  // when the whole run is f64 (an f64 run rounds nothing to f32 anywhere).
  DType master_dtype() const {
    return activation_dtype == DType::f64 ? DType::f64 : DType::f32;
  }
  // Convolutions and token Linears read a working copy of their masters in the products'
  // type when it is not the masters' (fp16 mode).
  bool uses_working_copies() const { return product_dtype != master_dtype(); }
  // The type of the head (fc and the features batch-norm), kept in the master type as
  // arcface_torch does even in fp16 mode.
  DType head_dtype() const { return master_dtype(); }
  // The context of a network's head: everything in the master type.
  ModelContext head() const { return ModelContext{backend, head_dtype(), head_dtype()}; }
  Tensor activation(const Shape& shape) const {
    return backend->empty(shape, activation_dtype, MemoryPurpose::activations);
  }
  // x as an operand of a convolution or token Linear: x itself when it is of the products'
  // type, else a copy cast to it (bf16 products: the layer keeps the copy for its backward,
  // half the bytes of the f32 activation).
  Tensor operand(const Tensor& x) const {
    if (x.dtype() == product_dtype) return x;
    Tensor converted = backend->empty(x.shape(), product_dtype, MemoryPurpose::activations);
    backend->cast(x, converted);
    return converted;
  }
};

// A network's context on `backend`; any precision but those NetworkPrecision lists is an error
// that names the network.
inline ModelContext network_context(Backend& backend, const NetworkPrecision& precision,
                                    const char* network) {
  const DType a = precision.activations, p = precision.products;
  PFC_CHECK(a == DType::f16 || a == DType::f32 || a == DType::f64,
            "{} activations must be f16, f32 or f64, got {}", network, dtype_name(a));
  PFC_CHECK(p == a || (p == DType::bf16 && a == DType::f32),
            "{} products must be of the activations' type ({}), or bf16 beside f32 activations; "
            "got {}",
            network, dtype_name(a), dtype_name(p));
  return ModelContext{&backend, a, p};
}

}  // namespace pfc
