// What a backend allocates, as opposed to what it computes: the choices that the algorithm
// (model, PartialFC, trainer) would otherwise make by the device's name, and how the memory
// ledger counts a request. The CPU and CUDA backends each have one; the meta backend takes the
// one of the backend it plans for, so that a plan allocates exactly what the run will.
#pragma once

#include <cstddef>

#include "backend/backend_kind.h"
#include "core/dtype.h"

namespace pfc {

// The CUDA arena's block alignment (device_arena.h): the ledger counts every request rounded
// up to it, as the arena hands it out.
inline constexpr std::size_t kCudaArenaAlignment = 256;
// The share of the device's free memory the CUDA arena reserves when PFC_CUDA_ARENA_BYTES does
// not say: the rest is left to NCCL's buffers and the libraries' own allocations.
inline constexpr double kCudaArenaFreeFraction = 0.92;

struct AllocationPolicy {
  BackendKind kind = BackendKind::cpu;
  // The backbone's activations when fp16 is on: f16 where convolutions run on tensor cores
  // (cuda); f32 on the CPU, where batch-norms, PReLU and the rest compute in f32.
  DType fp16_activations = DType::f32;
  // The operands of the backbone's convolutions and token Linears when fp16 is on: f16 (cuda),
  // or bf16 (the CPU: oneDNN's AVX512_BF16 and AMX kernels, the products accumulated in f32).
  DType fp16_products = DType::bf16;
  // The ledger counts a request of n bytes as n rounded up to a multiple of this: 1 for the
  // CPU's aligned_alloc (the bytes asked for), kCudaArenaAlignment for the arena.
  std::size_t ledger_granularity = 1;

  DType activations(bool fp16) const { return fp16 ? fp16_activations : DType::f32; }
  DType products(bool fp16) const { return fp16 ? fp16_products : DType::f32; }
  std::size_t ledger_bytes(std::size_t bytes) const {
    return (bytes + ledger_granularity - 1) / ledger_granularity * ledger_granularity;
  }
};

// The policy of the cpu or cuda backend (pfc::Error for meta, which has none of its own).
const AllocationPolicy& allocation_policy(BackendKind kind);

}  // namespace pfc
