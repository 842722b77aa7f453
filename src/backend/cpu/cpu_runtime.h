// What runs the CPU backend's work, for `pfc info` and the start of a run: the OpenMP threads
// of this process (OMP_NUM_THREADS) and, when pfc was built with it, oneDNN with the
// instruction set its kernels use.
#pragma once

#include <string>

namespace pfc::cpu {

// The threads a CPU kernel of this process runs on.
int cpu_threads();

// "oneDNN 2.6.3 (AVX-512 with AMX), convolutions", or, built without it, what runs instead.
std::string onednn_description();

}  // namespace pfc::cpu
