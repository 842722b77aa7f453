// Reductions. CPU reference: src/backend/cpu/cpu_elementwise.cpp (sum_of_squares,
// all_finite) and cpu_gemm.cpp (sum_rows). The CPU sums in f64; here each thread and block
// sums in f32 and the blocks' partials are folded in f64, in a fixed order, so the result is
// deterministic.
#include <cuda_fp16.h>

#include "backend/cuda/channel_reduce.cuh"
#include "backend/cuda/reduction_kernels.h"

namespace pfc::cuda {

namespace {

constexpr int kReduceBlock = 256;

int sum_of_squares_blocks(std::int64_t n) { return grid_size(n, kReduceBlock * 4, 4); }

template <class T>
__global__ void partial_sum_of_squares(const T* x, std::int64_t n, float* partial) {
  float acc = 0.0f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float v = to_float(x[i]);
    acc = fmaf(v, v, acc);
  }
  acc = block_reduce(acc, SumOp{}, 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void fold_partials(const float* partial, int count, double* result) {
  __shared__ double sums[kReduceBlock];
  double s = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) sums[threadIdx.x] += sums[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = sums[0];
}

__device__ __forceinline__ bool is_finite(float v) { return isfinite(v); }
__device__ __forceinline__ bool is_finite(__half v) {
  return (__half_as_ushort(v) & 0x7C00u) != 0x7C00u;
}

template <class T>
__global__ void find_nonfinite(const T* x, std::int64_t n, int* found) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  bool bad = false;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    bad |= !is_finite(x[i]);
  // Racing writers all store 1, so no atomic is needed.
  if (__syncthreads_or(bad) && threadIdx.x == 0) *found = 1;
}

template <class T>
struct ColumnSumOp {
  const T* x;
  std::int64_t cols;
  __device__ void accumulate(std::int64_t r, std::int64_t c, float (&acc)[1]) const {
    acc[0] += to_float(x[r * cols + c]);
  }
};

template <class TOut>
struct ColumnSumFinalize {
  TOut* out;
  __device__ void operator()(std::int64_t c, const double (&t)[1]) const {
    out[c] = from_float<TOut>(static_cast<float>(t[0]));
  }
};

}  // namespace

std::size_t sum_of_squares_scratch_bytes(std::int64_t n) {
  return sizeof(double) + static_cast<std::size_t>(sum_of_squares_blocks(n)) * sizeof(float);
}

void launch_sum_of_squares(const void* x, DType dtype, std::int64_t n, void* scratch,
                           double* result, cudaStream_t stream) {
  const int blocks = sum_of_squares_blocks(n);
  // The partials follow the f64 slot at the start of the scratch.
  float* partial = reinterpret_cast<float*>(static_cast<char*>(scratch) + sizeof(double));
  dispatch_float(dtype, "sum_of_squares", [&](auto tag) {
    using T = decltype(tag);
    partial_sum_of_squares<T>
        <<<blocks, kReduceBlock, 0, stream>>>(static_cast<const T*>(x), n, partial);
    PFC_CHECK_LAUNCH();
  });
  fold_partials<<<1, kReduceBlock, 0, stream>>>(partial, blocks, result);
  PFC_CHECK_LAUNCH();
}

void launch_find_nonfinite(const void* x, DType dtype, std::int64_t n, int* found_nonfinite,
                           cudaStream_t stream) {
  PFC_CHECK_CUDA(cudaMemsetAsync(found_nonfinite, 0, sizeof(int), stream));
  if (n == 0) return;
  dispatch_float(dtype, "all_finite", [&](auto tag) {
    using T = decltype(tag);
    find_nonfinite<T><<<grid_size(n, kReduceBlock, 4), kReduceBlock, 0, stream>>>(
        static_cast<const T*>(x), n, found_nonfinite);
    PFC_CHECK_LAUNCH();
  });
}

std::size_t sum_rows_scratch_bytes(std::int64_t rows, std::int64_t cols) {
  return channel_reduce_shape(rows, cols).scratch_bytes(1);
}

void launch_sum_rows(const void* x, DType x_dtype, std::int64_t rows, std::int64_t cols, void* out,
                     DType out_dtype, void* scratch, cudaStream_t stream) {
  const ChannelReduceShape shape = channel_reduce_shape(rows, cols);
  dispatch_float(x_dtype, "sum_rows", [&](auto x_tag) {
    dispatch_float(out_dtype, "sum_rows", [&](auto out_tag) {
      using T = decltype(x_tag);
      using TOut = decltype(out_tag);
      launch_channel_reduce<1>(shape, ColumnSumOp<T>{static_cast<const T*>(x), cols},
                               ColumnSumFinalize<TOut>{static_cast<TOut*>(out)},
                               static_cast<float*>(scratch), stream);
    });
  });
}

}  // namespace pfc::cuda
