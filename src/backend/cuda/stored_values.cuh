// The optimiser kernels' element types: master weights and moments in f32, or stored 16-bit
// class centres and moments (classifier_storage: f16 or bf16 weights, f16 or bf16 moments),
// read into f32 and written back rounded stochastically with the bits of each element's
// global index (core/stochastic_rounding.h), as the CPU backend rounds them
// (backend/cpu/cpu_stored_values.h). Included by .cu files only.
#pragma once

#include "backend/cuda/kernel_common.cuh"

namespace pfc::cuda {

// The rounding of one update: a stream per stored tensor and the global element index of
// element 0 of the tensor (first_row * cols).
struct RoundingStreams {
  std::uint64_t weight = 0, first_moment = 0, second_moment = 0;
  std::uint64_t first_element = 0;
};

inline RoundingStreams rounding_streams(std::uint64_t key, std::int64_t first_row,
                                        std::int64_t cols) {
  return {rounding_stream(key, RoundedTensor::weight),
          rounding_stream(key, RoundedTensor::first_moment),
          rounding_stream(key, RoundedTensor::second_moment),
          static_cast<std::uint64_t>(first_row * cols)};
}

// N consecutive values stored at p + i, element i being global element `element`.
template <int N, class T>
__device__ __forceinline__ void store_rounded_float(T* p, std::int64_t i, const float (&in)[N],
                                                    std::uint64_t stream, std::uint64_t element) {
  if constexpr (N == 1) {
    p[i] = store_rounded<T>(in[0], stream, element);
  } else {
    Pack<T, N> pack;
#pragma unroll
    for (int k = 0; k < N; ++k) pack.v[k] = store_rounded<T>(in[k], stream, element + k);
    *reinterpret_cast<Pack<T, N>*>(p + i) = pack;
  }
}

// Calls f(W{}, M{}) for the weights' and moments' types: (float, float) for masters, or any
// pair of __half and __nv_bfloat16 for stored values (the operand checks allow no other).
template <class F>
void dispatch_optimised(DType w_dtype, DType m_dtype, const char* op, F&& f) {
  if (w_dtype == DType::f32) {
    f(float{}, float{});
    return;
  }
  dispatch_stored(w_dtype, op, [&](auto w_tag) {
    dispatch_stored(m_dtype, op, [&](auto m_tag) {
      using W = decltype(w_tag);
      using M = decltype(m_tag);
      if constexpr (!std::is_same_v<W, float> && !std::is_same_v<M, float>) {
        f(W{}, M{});
      } else {
        throw_unsupported_dtype(op, m_dtype);
      }
    });
  });
}

}  // namespace pfc::cuda
