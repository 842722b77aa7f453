// Which of cuDNN's convolution algorithms a plan takes, from the list a cudnnFind*Ex measured
// or a cudnnGet*_v7 suggested, and, when none qualifies, an account of why each was refused.
// Kept apart from the cuDNN calls (plain C++ over cuDNN's enums, nothing that needs a GPU),
// so that tests can hand it the lists a GPU might give.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "core/dtype.h"

namespace pfc::cuda {

// One entry of a cudnnConvolution*AlgoPerf_t list, direction aside.
struct AlgoResult {
  int algo = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::size_t memory = 0;  // workspace bytes it needs
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  cudnnDeterminism_t determinism = CUDNN_DETERMINISTIC;
  // An FFT or Winograd algorithm, which rounds in a transformed domain.
  bool transforms_operands = false;
};

// Why a result cannot run this plan, or `usable`.
enum class AlgoVerdict { usable, not_supported, workspace_too_large, tensor_op_math };

// f16 takes any math; f32 refuses only the tensor-op math types, the ones that may run TF32
// (its descriptors are set to CUDNN_FMA_MATH, so a result cuDNN reports as DEFAULT_MATH runs
// on FMA there).
AlgoVerdict judge_algorithm(const AlgoResult& r, DType dtype, std::size_t workspace_limit);

struct AlgoPick {
  std::size_t index = 0;
  // f32 only: no deterministic algorithm without operand transforms qualified, so this one is
  // the fastest usable one of any kind (its parity with the CPU is only to its rounding).
  bool inexact_fallback = false;
};

// The first (fastest) usable result: for f32 (the parity mode) a deterministic one without
// operand transforms when there is one, any usable one otherwise; for f16 any usable one.
std::optional<AlgoPick> pick_algorithm(std::span<const AlgoResult> results, DType dtype,
                                       std::size_t workspace_limit);

// "algorithm 1: needs 1.50 GiB of workspace, over the 512 MiB allowed; algorithm 6: not
// supported (CUDNN_STATUS_NOT_SUPPORTED)": each result with its reason for refusal.
std::string describe_refusals(std::span<const AlgoResult> results, DType dtype,
                              std::size_t workspace_limit);

}  // namespace pfc::cuda
