// Error checks for every CUDA runtime, cuDNN, cuBLAS and NCCL call: a failure throws
// pfc::Error naming the call, file:line and the library's own error string. The header needs
// no fmt, so kernel files (.cu) use the same checks as the host code.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include "core/dtype.h"

namespace pfc::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file,
                                   int line);
// A kernel dispatcher met an element type it has no instance for.
[[noreturn]] void throw_unsupported_dtype(const char* op, DType dtype);

}  // namespace pfc::cuda

#define PFC_CHECK_CUDA(call)                                                 \
  do {                                                                       \
    const cudaError_t pfc_status_ = (call);                                  \
    if (pfc_status_ != cudaSuccess)                                          \
      ::pfc::cuda::throw_cuda_error(pfc_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define PFC_CHECK_CUDNN(call)                                                 \
  do {                                                                        \
    const cudnnStatus_t pfc_status_ = (call);                                 \
    if (pfc_status_ != CUDNN_STATUS_SUCCESS)                                  \
      ::pfc::cuda::throw_cudnn_error(pfc_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define PFC_CHECK_CUBLAS(call)                                                 \
  do {                                                                         \
    const cublasStatus_t pfc_status_ = (call);                                 \
    if (pfc_status_ != CUBLAS_STATUS_SUCCESS)                                  \
      ::pfc::cuda::throw_cublas_error(pfc_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define PFC_CHECK_NCCL(call)                                                 \
  do {                                                                       \
    const ncclResult_t pfc_status_ = (call);                                 \
    if (pfc_status_ != ncclSuccess)                                          \
      ::pfc::cuda::throw_nccl_error(pfc_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad launch configuration shows up here, not at the next sync.
// cudaGetLastError also resets the error it returns (cudaPeekAtLastError does not), so one
// bad launch is reported once, by the check after it, and later launches are not blamed.
#define PFC_CHECK_LAUNCH() PFC_CHECK_CUDA(cudaGetLastError())
