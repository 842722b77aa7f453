#include "backend/cuda/cuda_check.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "core/error.h"

namespace pfc::cuda {

namespace {
std::string where(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return fmt::format("{}:{}", base ? base + 1 : file, line);
}
}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw Error(fmt::format("CUDA error {} ({}): {} in `{}` at {}", static_cast<int>(status),
                          cudaGetErrorName(status), cudaGetErrorString(status), call,
                          where(file, line)));
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[1024] = {};
  cudnnGetLastErrorString(detail, sizeof detail);
  throw Error(fmt::format("cuDNN error {}: {}{}{} in `{}` at {}", static_cast<int>(status),
                          cudnnGetErrorString(status), detail[0] ? " — " : "", detail, call,
                          where(file, line)));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error(fmt::format("cuBLAS error {} ({}): {} in `{}` at {}", static_cast<int>(status),
                          cublasGetStatusName(status), cublasGetStatusString(status), call,
                          where(file, line)));
}

void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  throw Error(fmt::format("NCCL error {}: {} in `{}` at {}", static_cast<int>(status),
                          ncclGetErrorString(status), call, where(file, line)));
}

void throw_unsupported_dtype(const char* op, DType dtype) {
  throw Error(
      fmt::format("{}: the CUDA backend has no kernel for element type {}", op, dtype_name(dtype)));
}

}  // namespace pfc::cuda
