// What the operands of a backend's primitives may be: where they live and which element types
// its kernels take. The CPU backend computes in f32 (f64 for the gradient checker) and keeps
// per-channel and per-row values in the activations' type; the CUDA backend computes in f16 or
// f32, keeps parameters, statistics and row reductions in f32, and converts per element where
// its kernels read several types. The meta backend, planning for one of them, checks its own
// tensors by that one's rules. operand_checks.h applies the rules, one function per primitive,
// for all three.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "backend/backend_kind.h"
#include "core/allocator.h"
#include "core/dtype.h"

namespace pfc {

struct OperandRules {
  std::string backend = "cpu";          // named in messages
  DeviceKind device = DeviceKind::cpu;  // where the operands of compute primitives live
  // The element types the compute primitives take (activations, matrices, vectors).
  std::array<DType, 2> floats{DType::f32, DType::f64};
  // Per-channel parameters and statistics, per-row reductions (norms, row max and sum, target
  // probabilities) and SGD's weights and momentum: f32 whatever the activations (cuda), or
  // f32 or the activations' own type (cpu: its gradient checker runs everything in f64).
  bool f32_statistics = false;
  // The operands of axpy, add_row_vector, sum_rows, the L2 normalisation and SGD's gradient
  // may each be any of `floats`, converted per element (cuda's kernels); otherwise one type.
  bool mixed_floats = false;
  // An f16 x f16 GEMM may write f16 (cuBLAS); otherwise it writes f32 only (the CPU widens).
  bool f16_gemm_output = false;
  // Convolutions and GEMMs also take bf16 operands and write f32, the products accumulated in
  // f32 (the CPU's fp16 training: oneDNN's bf16 kernels, or the f32 ones on the widened
  // operands, whose products are exact in f32).
  bool bf16_products = false;
  // The most rows the margin softmax takes in one call (cuda: one grid row per batch row).
  std::int64_t max_margin_rows = std::numeric_limits<std::int64_t>::max();
  // The largest GEMM dimension or leading dimension the BLAS takes: cblas passes each as
  // OpenBLAS's blasint, a 32-bit int in Debian's build (its kernels index elements in 64 bits,
  // so a matrix past 2^31 elements is fine while each dimension fits); cuBLAS's 64-bit entry
  // points take any.
  std::int64_t max_blas_dimension = std::numeric_limits<int>::max();
  // "OpenBLAS's 32-bit blasint" or "cuBLAS's 64-bit API": named with a refusal.
  std::string blas_dimension_type = "OpenBLAS's 32-bit blasint";

  bool computes_in(DType t) const { return t == floats[0] || t == floats[1]; }
  // "f32 or f64"
  std::string floats_text() const;
};

// The rules of the cpu or cuda backend (pfc::Error for meta, which plans by another's), for
// operands that live on `device`: the backend's own, or meta for a plan of it.
OperandRules operand_rules(BackendKind kind, DeviceKind device);

}  // namespace pfc
