#include "app/inference_precision_option.h"

#include <fmt/format.h>

#include "backend/cpu/cpu_runtime.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "core/error.h"

namespace pfc {

void add_inference_precision_option(CLI::App* cmd, std::string& precision) {
  cmd->add_option("--precision", precision,
                  "f32, or bf16 (cpu, on CPUs with AVX512_BF16 or AMX): convolutions and the "
                  "embedding's Linear with bf16 operands and f32 accumulation; batch-norms, "
                  "PReLU and the embeddings stay f32")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
}

InferencePrecision inference_precision(const std::string& precision, const std::string& device) {
  if (precision != "bf16") return InferencePrecision::f32;
  if (device != "cpu")
    throw UsageError("--precision bf16 needs --device cpu (bf16 inference is the CPU "
                     "backend's; cuda has --fp16)");
  if (!cpu::onednn_bf16_native())
    throw UsageError(fmt::format("--precision bf16 needs a CPU with AVX512_BF16 or AMX "
                                 "instructions; oneDNN runs with {} here (pfc info)",
                                 cpu::onednn_isa()));
  return InferencePrecision::bf16;
}

}  // namespace pfc
