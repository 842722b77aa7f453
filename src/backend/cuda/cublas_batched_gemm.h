// Row-major batched GEMM through cuBLAS's strided-batched GEMM (the layout of cublas_gemm.h:
// c^T = op(b)^T op(a)^T column-major on the same buffers). cuBLAS takes one batch stride, so
// the shorter of the geometry's two batch levels becomes a loop of calls, each a strided batch
// over the longer. a, b, c all f32 (pedantic f32, no TF32) or all f16 (tensor cores, f32
// accumulation).
#pragma once

#include <cublas_v2.h>

#include "backend/backend.h"

namespace pfc::cuda {

void cublas_batched_gemm(cublasHandle_t handle, const BatchedGemmGeometry& g, double alpha,
                         const Tensor& a, const Tensor& b, double beta, Tensor& c);

}  // namespace pfc::cuda
