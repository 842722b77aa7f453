// A build without oneDNN (PFC_ONEDNN=OFF, or none found): every convolution runs on the
// reference loops of cpu_conv2d.cpp.
#include "backend/cpu/cpu_runtime.h"
#include "backend/cpu/onednn_bf16_gemm.h"
#include "backend/cpu/onednn_conv2d.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "backend/cpu/onednn_sgemm.h"
#include "core/error.h"

namespace pfc::cpu {

bool onednn_built() { return false; }

bool onednn_trusted_shape(const Conv2dGeometry&) { return false; }

std::optional<std::int64_t> onednn_conv2d_workspace_bytes(const Conv2dGeometry&, ConvDirection,
                                                         DType) {
  return std::nullopt;
}

void onednn_conv2d(const Conv2dGeometry&, ConvDirection direction, DType, const void*,
                   const void*, float*, void*, const void*) {
  throw Error(fmt::format("{}: pfc was built without oneDNN", conv_direction_name(direction)));
}

PreparedFilterLayout onednn_prepared_filter_layout(const Conv2dGeometry&, ConvDirection) {
  return {};
}

void onednn_prepare_filter(const Conv2dGeometry&, ConvDirection direction, const float*, void*,
                           void*) {
  throw Error(fmt::format("{}: pfc was built without oneDNN", conv_direction_name(direction)));
}

bool onednn_bf16_native() { return false; }

std::optional<std::int64_t> onednn_fused_conv2d_workspace_bytes(const FusedConv&) {
  return std::nullopt;
}

void onednn_fused_conv2d(const FusedConv&, const void*, const void*, const float*,
                         const float*, void*, void*, const void*) {
  throw Error("conv2d_forward_fused: pfc was built without oneDNN");
}

PreparedFilterLayout onednn_fused_prepared_filter_layout(const FusedConv&) { return {}; }

void onednn_fused_prepare_filter(const FusedConv&, const void*, void*, void*) {
  throw Error("conv2d_forward_fused: pfc was built without oneDNN");
}

std::optional<std::int64_t> onednn_bf16_gemm_workspace_bytes(const Bf16GemmShape&) {
  return std::nullopt;
}

void onednn_bf16_gemm(const Bf16GemmShape&, const void*, const void*, float*, void*) {
  throw Error("gemm: pfc was built without oneDNN");
}

bool onednn_sgemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                  std::int64_t, const float*, std::int64_t, float, float*, std::int64_t) {
  return false;
}

std::string onednn_isa() { return "none (pfc was built without oneDNN)"; }

std::string onednn_description() {
  return "reference convolutions (pfc was built without oneDNN: PFC_ONEDNN=OFF or none found)";
}

}  // namespace pfc::cpu
