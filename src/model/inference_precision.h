// The arithmetic of an inference command's convolutions and GEMMs (`--precision`): f32, or
// bf16 operands with f32 accumulation where the CPU has bf16 instructions. Batch-norms,
// PReLU, sums and the embeddings stay f32 either way.
#pragma once

namespace pfc {

enum class InferencePrecision { f32, bf16 };

}  // namespace pfc
