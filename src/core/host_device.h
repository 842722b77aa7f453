// Lets small pure functions (RNG, fill rules, margin maths) compile for host and device alike,
// so both backends run literally the same code for them.
#pragma once

#if defined(__CUDACC__)
#define PFC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define PFC_HOST_DEVICE inline
#endif
