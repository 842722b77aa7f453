#include "backend/cuda/conv_algorithm_choice.h"

#include <fmt/format.h>

namespace pfc::cuda {

AlgoVerdict judge_algorithm(const AlgoResult& r, DType dtype, std::size_t workspace_limit) {
  if (r.status != CUDNN_STATUS_SUCCESS) return AlgoVerdict::not_supported;
  if (r.memory > workspace_limit) return AlgoVerdict::workspace_too_large;
  // TF32 would break f32 parity with the CPU backend and PyTorch. Only the tensor-op types
  // can bring it: cuDNN 9 reports its ordinary f32 algorithms as DEFAULT_MATH or FMA_MATH,
  // and the f32 descriptors stay at FMA_MATH whatever a result says.
  const bool tensor_ops =
      r.math == CUDNN_TENSOR_OP_MATH || r.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  if (dtype != DType::f16 && tensor_ops) return AlgoVerdict::tensor_op_math;
  return AlgoVerdict::usable;
}

std::optional<AlgoPick> pick_algorithm(std::span<const AlgoResult> results, DType dtype,
                                       std::size_t workspace_limit) {
  auto usable = [&](const AlgoResult& r) {
    return judge_algorithm(r, dtype, workspace_limit) == AlgoVerdict::usable;
  };
  // f32 is the parity mode (golden values within 1e-4, the CPU backend within f32 rounding):
  // FFT and Winograd round in the transformed domain, which costs digits, and non-deterministic
  // algorithms (atomic accumulation) make two identical runs differ. f16 takes the fastest.
  for (std::size_t i = 0; i < results.size(); ++i) {
    const AlgoResult& r = results[i];
    const bool exact_enough = dtype == DType::f16 || (!r.transforms_operands &&
                                                      r.determinism == CUDNN_DETERMINISTIC);
    if (usable(r) && exact_enough) return AlgoPick{i, false};
  }
  for (std::size_t i = 0; i < results.size(); ++i)
    if (usable(results[i])) return AlgoPick{i, true};
  return std::nullopt;
}

namespace {

std::string mib(std::size_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  return m >= 1024.0 ? fmt::format("{:.2f} GiB", m / 1024.0) : fmt::format("{:.1f} MiB", m);
}

}  // namespace

std::string describe_refusals(std::span<const AlgoResult> results, DType dtype,
                              std::size_t workspace_limit) {
  if (results.empty()) return "cuDNN listed no algorithm";
  std::string text;
  for (const AlgoResult& r : results) {
    if (!text.empty()) text += "; ";
    text += fmt::format("algorithm {}: ", r.algo);
    switch (judge_algorithm(r, dtype, workspace_limit)) {
      case AlgoVerdict::not_supported:
        text += fmt::format("not supported ({})", cudnnGetErrorString(r.status));
        break;
      case AlgoVerdict::workspace_too_large:
        text += fmt::format("needs {} of workspace, over the {} allowed", mib(r.memory),
                            mib(workspace_limit));
        break;
      case AlgoVerdict::tensor_op_math:
        text += "tensor-op math (TF32), which f32 refuses";
        break;
      case AlgoVerdict::usable:
        text += "usable";
        break;
    }
  }
  return text;
}

}  // namespace pfc::cuda
