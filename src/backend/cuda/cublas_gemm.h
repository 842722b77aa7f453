// Row-major GEMM through cuBLAS's 64-bit API (any dimension, any element count): c = alpha *
// op(a) * op(b) + beta * c. cuBLAS is column-major, so it computes c^T = op(b)^T * op(a)^T on
// the same buffers. Supported
// (a, b, c) dtypes: (f32, f32, f32) with pedantic f32 compute (no TF32), (f16, f16, f16) and
// (f16, f16, f32) on tensor cores with f32 accumulation.
#pragma once

#include <cublas_v2.h>

#include "core/tensor.h"

namespace pfc::cuda {

void cublas_gemm(cublasHandle_t handle, bool transpose_a, bool transpose_b, double alpha,
                 const Tensor& a, const Tensor& b, double beta, Tensor& c);

}  // namespace pfc::cuda
