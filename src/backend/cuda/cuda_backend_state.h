// What a CudaBackend owns (arena, stream, library handles, persistent device buffers, the
// rules its operands are checked by) and the codes its kernels record for bad indices.
// Private to cuda_backend.cpp and cuda_backend_ops.cpp.
#pragma once

#include <memory>
#include <string>

#include "backend/cuda/cublas_gemm.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_handles.h"
#include "backend/cuda/cudnn_convolution.h"
#include "backend/cuda/device_arena.h"
#include "backend/cuda/pinned_host_allocator.h"
#include "backend/operand_rules.h"

namespace pfc {

// Codes a kernel writes into the backend's error flag; synchronize() names them.
enum DeviceErrorCode : int {
  kNoDeviceError = 0,
  kGatherIndexOutOfRange = 1,
  kScatterIndexOutOfRange = 2,
  kSgdRowIndexOutOfRange = 3,
  kMarginLabelOutOfRange = 4,
  kSoftmaxLabelOutOfRange = 5,
  kAdamWRowIndexOutOfRange = 6,
  kFilterLabelOutOfRange = 7,
  kMarginFactorLabelOutOfRange = 8,
  kScaleTargetLabelOutOfRange = 9,
  kSgdSparseIndexInvalid = 10,
  kAdamWSparseIndexInvalid = 11,
};

const char* device_error_message(int code);

// Declaration order is destruction order reversed: buffers go back to the arena before the
// handles and the stream go, and the arena goes last.
struct CudaBackend::Resources {
  OperandRules rules = operand_rules(BackendKind::cuda, DeviceKind::cuda);
  int ordinal = 0;
  std::string device_name;
  std::unique_ptr<DeviceArena> arena;
  PinnedHostAllocator pinned;
  cuda::Stream stream;
  cuda::CudnnHandle cudnn;
  cuda::CublasHandle cublas;
  std::unique_ptr<cuda::CudnnConvolution> convolution;
  Tensor cublas_workspace;  // device, handed to cuBLAS once
  Tensor error_flag;        // device i32 [1], 0 while no kernel has found a bad index
  Tensor host_results;      // pinned, 16 bytes: the flag and the scalar results read back
};

}  // namespace pfc
