// PFC_ISA_CLONES before a kernel compiles it for AVX-512, AVX2 and the x86-64 baseline, and the
// loader picks the best the CPU has (GCC's function multi-versioning), so the build itself
// stays portable. Elsewhere the compiler's baseline serves. GCC contracts a * b + c into one
// fused multiply-add where the instruction set has it (AVX2 and AVX-512), so the last bit of
// a result may differ between CPUs, never between runs on one.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PFC_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PFC_ISA_CLONES
#endif
