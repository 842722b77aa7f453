#include "backend/operand_rules.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

std::string OperandRules::floats_text() const {
  return fmt::format("{} or {}", dtype_name(floats[0]), dtype_name(floats[1]));
}

OperandRules operand_rules(BackendKind kind, DeviceKind device) {
  PFC_CHECK(kind != BackendKind::meta,
            "the meta backend checks operands by the rules of the backend it plans for");
  OperandRules r;
  r.device = device;
  if (kind == BackendKind::cpu) {
    r.backend = device == DeviceKind::cpu ? "cpu" : "meta (planning cpu)";
    r.bf16_products = true;
    return r;
  }
  r.backend = device == DeviceKind::cuda ? "cuda" : "meta (planning cuda)";
  r.floats = {DType::f16, DType::f32};
  r.f32_statistics = true;
  r.mixed_floats = true;
  r.f16_gemm_output = true;
  r.max_margin_rows = 65535;  // gridDim.y
  r.max_blas_dimension = std::numeric_limits<std::int64_t>::max();
  r.blas_dimension_type = "cuBLAS's 64-bit API";
  return r;
}

}  // namespace pfc
