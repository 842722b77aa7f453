// CudaBackend: construction, memory, data movement, synchronisation and the factory. The
// compute primitives are in cuda_backend_ops.cpp.
#include "backend/cuda/cuda_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_backend_state.h"
#include "backend/cuda/elementwise_kernels.h"
#include "backend/cuda/library_versions.h"
#include "backend/cuda/workspace_policy.h"
#include "backend/operand_checks.h"
#include "core/error.h"

namespace pfc {

const char* device_error_message(int code) {
  switch (code) {
    case kGatherIndexOutOfRange:
      return "gather_rows: an index is outside the source rows";
    case kScatterIndexOutOfRange:
      return "scatter_rows: an index is outside the destination rows";
    case kSgdRowIndexOutOfRange:
      return "sgd_update_rows: an index is outside the weight rows";
    case kMarginLabelOutOfRange:
      return "margin_logits: a local label is outside [-1, classes of the shard)";
    case kSoftmaxLabelOutOfRange:
      return "softmax_grad: a local label is outside [-1, classes of the shard)";
    case kAdamWRowIndexOutOfRange:
      return "adamw_update_rows: an index is outside the weight rows";
    case kFilterLabelOutOfRange:
      return "interclass_filter: a local label is outside [-1, classes of the shard)";
    case kMarginFactorLabelOutOfRange:
      return "margin_gradient_factor: a local label is outside [-1, classes of the shard)";
    case kScaleTargetLabelOutOfRange:
      return "scale_target_column: a local label is outside [-1, classes of the shard)";
    case kSgdSparseIndexInvalid:
      return "sgd_update_sparse_grad: the index is not sorted and unique inside the weight rows";
    case kAdamWSparseIndexInvalid:
      return "adamw_update_sparse_grad: the index is not sorted and unique inside the weight rows";
    default:
      return "a kernel reported an unknown error code";
  }
}

int cuda_visible_device_count() {
  int count = 0;
  // No driver or no device both mean "no GPU here": answer 0 and clear the error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return 0;
  }
  return count;
}

std::size_t cuda_default_arena_bytes(int device_ordinal) {
  PFC_CHECK_CUDA(cudaSetDevice(device_ordinal));
  return DeviceArena::default_reservation_bytes();
}

std::unique_ptr<Backend> make_cuda_backend(int device_ordinal) {
  return std::make_unique<CudaBackend>(device_ordinal);
}

CudaBackend::CudaBackend(int device_ordinal, std::size_t arena_bytes)
    : r_(std::make_unique<Resources>()) {
  const int count = cuda_visible_device_count();
  PFC_CHECK(device_ordinal >= 0 && device_ordinal < count,
            "CUDA device {} requested but {} device(s) are visible", device_ordinal, count);
  warn_about_older_cuda_libraries();
  PFC_CHECK_CUDA(cudaSetDevice(device_ordinal));
  r_->ordinal = device_ordinal;
  cudaDeviceProp prop{};
  PFC_CHECK_CUDA(cudaGetDeviceProperties(&prop, device_ordinal));
  r_->device_name = prop.name;

  r_->arena = std::make_unique<DeviceArena>(arena_bytes ? arena_bytes
                                                        : DeviceArena::default_reservation_bytes());
  r_->stream = cuda::make_stream();
  r_->cudnn = cuda::make_cudnn_handle();
  PFC_CHECK_CUDNN(cudnnSetStream(r_->cudnn, r_->stream));
  r_->cublas = cuda::make_cublas_handle();
  PFC_CHECK_CUBLAS(cublasSetStream(r_->cublas, r_->stream));
  // From the arena, so that it is counted (workspace_policy.h).
  r_->cublas_workspace =
      Tensor::empty({static_cast<std::int64_t>(cuda::kCublasWorkspaceBytes)}, DType::u8,
                    *r_->arena, MemoryPurpose::workspace);
  PFC_CHECK_CUBLAS(cublasSetWorkspace(r_->cublas, r_->cublas_workspace.raw(),
                                      cuda::kCublasWorkspaceBytes));
  r_->convolution = std::make_unique<cuda::CudnnConvolution>(r_->cudnn, *r_->arena);

  r_->error_flag = Tensor::empty({1}, DType::i32, *r_->arena, MemoryPurpose::workspace);
  PFC_CHECK_CUDA(cudaMemsetAsync(r_->error_flag.raw(), 0, sizeof(int), r_->stream));
  r_->host_results = Tensor::empty({2}, DType::f64, r_->pinned, MemoryPurpose::workspace);
  PFC_CHECK_CUDA(cudaStreamSynchronize(r_->stream));
}

CudaBackend::~CudaBackend() {
  // Queued work must finish before its buffers and handles go; an error here has nowhere to go.
  if (r_ && r_->stream) static_cast<void>(cudaStreamSynchronize(r_->stream));
}

std::string CudaBackend::name() const {
  return fmt::format("cuda:{} ({})", r_->ordinal, r_->device_name);
}

Allocator& CudaBackend::allocator() { return *r_->arena; }
DeviceArena& CudaBackend::arena() { return *r_->arena; }
Allocator& CudaBackend::staging_allocator() { return r_->pinned; }

std::int64_t CudaBackend::device_overhead_bytes() {
  // Everything the device has handed out, less the arena that holds all of our tensors.
  std::size_t free_bytes = 0, total_bytes = 0;
  PFC_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto used = static_cast<std::int64_t>(total_bytes - free_bytes);
  return std::max<std::int64_t>(0, used - static_cast<std::int64_t>(r_->arena->capacity()));
}
int CudaBackend::device_ordinal() const { return r_->ordinal; }
cudaStream_t CudaBackend::stream() const { return r_->stream; }

Tensor CudaBackend::scratch(std::size_t bytes) {
  return Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::u8, *r_->arena,
                       MemoryPurpose::workspace);
}

int* CudaBackend::error_flag() { return r_->error_flag.data<std::int32_t>(); }

void CudaBackend::wait_and_check() {
  int* host_flag = static_cast<int*>(r_->host_results.raw());
  PFC_CHECK_CUDA(
      cudaMemcpyAsync(host_flag, error_flag(), sizeof(int), cudaMemcpyDeviceToHost, r_->stream));
  PFC_CHECK_CUDA(cudaStreamSynchronize(r_->stream));
  const int code = *host_flag;
  if (code != kNoDeviceError) {
    PFC_CHECK_CUDA(cudaMemsetAsync(error_flag(), 0, sizeof(int), r_->stream));
    throw Error(fmt::format("{} (found on {})", device_error_message(code), name()));
  }
}

void CudaBackend::synchronize() { wait_and_check(); }

void CudaBackend::copy(const Tensor& src, Tensor& dst) {
  operand_check::copy(r_->rules, src, dst);
  const std::size_t bytes = src.bytes();
  if (bytes == 0) return;
  if (src.device() == DeviceKind::cpu && dst.device() == DeviceKind::cpu) {
    // Either side may be pinned memory that a queued copy still writes or reads.
    PFC_CHECK_CUDA(cudaStreamSynchronize(r_->stream));
    std::memcpy(dst.raw(), src.raw(), bytes);
    return;
  }
  PFC_CHECK_CUDA(cudaMemcpyAsync(dst.raw(), src.raw(), bytes, cudaMemcpyDefault, r_->stream));
  // Only a pageable destination makes the call itself wait; a pinned one would be read early.
  if (dst.device() == DeviceKind::cpu) wait_and_check();
}

void CudaBackend::fill(Tensor& x, double value) {
  operand_check::fill(r_->rules, x);
  cuda::launch_fill(x.raw(), x.dtype(), x.numel(), value, r_->stream);
}

void CudaBackend::fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                              double stddev) {
  operand_check::fill_normal(r_->rules, x);
  cuda::launch_fill_normal(x.data<float>(), x.numel(), key, first_index, stddev, r_->stream);
}

void CudaBackend::cast(const Tensor& src, Tensor& dst) {
  operand_check::cast(r_->rules, src, dst);
  cuda::launch_cast(src.raw(), src.dtype(), dst.raw(), dst.dtype(), src.numel(), r_->stream);
}

}  // namespace pfc
