// RAII owners for the CUDA, cuDNN and cuBLAS objects the backend holds (streams, events,
// library handles, descriptors), so nothing leaks when an error unwinds a half-built state.
#pragma once

#include <utility>

#include "backend/cuda/cuda_check.h"

namespace pfc::cuda {

// Owns one handle of a C API whose destroy function is `Destroy`. Move-only.
template <class Handle, auto Destroy>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  Handle get() const { return handle_; }
  operator Handle() const { return handle_; }  // NOLINT: passed straight to the C API

 private:
  // A destroy error cannot be reported from a destructor; the handle is gone either way.
  void reset() {
    if (handle_) static_cast<void>(Destroy(handle_));
    handle_ = Handle{};
  }
  Handle handle_{};
};

using Stream = Owned<cudaStream_t, cudaStreamDestroy>;
using Event = Owned<cudaEvent_t, cudaEventDestroy>;
using CudnnHandle = Owned<cudnnHandle_t, cudnnDestroy>;
using CublasHandle = Owned<cublasHandle_t, cublasDestroy>;
using TensorDescriptor = Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;

// A stream that does not synchronise with the legacy default stream.
inline Stream make_stream() {
  cudaStream_t s = nullptr;
  PFC_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

// An event used only for ordering between streams (no timing: cheaper to record).
inline Event make_ordering_event() {
  cudaEvent_t e = nullptr;
  PFC_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return Event(e);
}

inline CudnnHandle make_cudnn_handle() {
  cudnnHandle_t h = nullptr;
  PFC_CHECK_CUDNN(cudnnCreate(&h));
  return CudnnHandle(h);
}

inline CublasHandle make_cublas_handle() {
  cublasHandle_t h = nullptr;
  PFC_CHECK_CUBLAS(cublasCreate(&h));
  return CublasHandle(h);
}

inline TensorDescriptor make_tensor_descriptor() {
  cudnnTensorDescriptor_t d = nullptr;
  PFC_CHECK_CUDNN(cudnnCreateTensorDescriptor(&d));
  return TensorDescriptor(d);
}

inline FilterDescriptor make_filter_descriptor() {
  cudnnFilterDescriptor_t d = nullptr;
  PFC_CHECK_CUDNN(cudnnCreateFilterDescriptor(&d));
  return FilterDescriptor(d);
}

inline ConvolutionDescriptor make_convolution_descriptor() {
  cudnnConvolutionDescriptor_t d = nullptr;
  PFC_CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&d));
  return ConvolutionDescriptor(d);
}

}  // namespace pfc::cuda
