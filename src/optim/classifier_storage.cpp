#include "optim/classifier_storage.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

DType parse_classifier_storage(std::string_view name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  throw UsageError(fmt::format(
      "unknown classifier_storage '{}': expected \"f32\", \"f16\" or \"bf16\"", name));
}

DType stored_weight_type(DType storage, DType compute) {
  return is_16bit_float(storage) ? storage : compute;
}

DType stored_moment_type(DType weight, OptimizerKind kind) {
  return weight == DType::f16 && kind == OptimizerKind::adamw ? DType::bf16 : weight;
}

}  // namespace pfc
