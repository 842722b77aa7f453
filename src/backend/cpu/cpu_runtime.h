// What runs the CPU backend's work, for `pfc info` and the start of a run: the OpenMP threads
// of this process (OMP_NUM_THREADS), the instruction set of the vectorised passes and, when pfc
// was built with it, oneDNN with the instruction set its kernels use.
#pragma once

#include <string>

namespace pfc::cpu {

// The threads a CPU kernel of this process runs on.
int cpu_threads();

// "oneDNN 2.6.3 (AVX-512 with AMX), convolutions", or, built without it, what runs instead.
std::string onednn_description();

// The instruction set oneDNN's kernels dispatch to ("AVX-512 with BF16"), or, built without
// it, "none (pfc was built without oneDNN)".
std::string onednn_isa();

// The instruction set batch-norm's and PReLU's f32 passes (cpu_channel_passes_f32.h) run with
// on this CPU: "AVX-512", "AVX2", "SSE2" (x86-64's baseline), or "the compiler's baseline".
const char* channel_passes_isa();

}  // namespace pfc::cpu
