// How the CPU optimisers read and write their tensors: plain pointers to values of the compute
// type (f32, f64), or stored 16-bit values (f16, bf16 class centres and moments) read into the
// compute type and written back rounded stochastically, each element with the bits of its
// global index (core/stochastic_rounding.h), exactly as the CUDA kernels round them. The
// update loops take either through load/store, so one loop serves both.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/bfloat16.h"
#include "core/error.h"
#include "core/half.h"
#include "core/stochastic_rounding.h"

namespace pfc::cpu {

template <class T>
T load(const T* p, std::int64_t i) {
  return p[i];
}

template <class T>
void store(T* p, std::int64_t i, T v) {
  p[i] = v;
}

// A run of stored values S (Half or BFloat16) seen in compute type T: element i is global
// element first_element + i of `stream`.
template <class T, class S>
struct StoredValues {
  S* p;
  std::uint64_t stream;
  std::uint64_t first_element;
};

template <class T, class S>
T load(const StoredValues<T, S>& s, std::int64_t i) {
  return static_cast<T>(s.p[i].to_float());
}

template <class T, class S>
void store(const StoredValues<T, S>& s, std::int64_t i, T v) {
  const std::uint32_t bits = rounding_bits(s.stream, s.first_element + static_cast<std::uint64_t>(i));
  // An f64 run's value goes to f32 first (nearest), then to 16 bits stochastically.
  const float f = static_cast<float>(v);
  if constexpr (std::is_same_v<S, Half>) {
    s.p[i] = Half::from_bits(f16_bits_stochastic(f, bits));
  } else {
    s.p[i] = BFloat16::from_bits(bf16_bits_stochastic(f, bits));
  }
}

// Calls f(S{}) with S = Half or BFloat16 for a stored 16-bit type.
template <class F>
decltype(auto) dispatch_stored(DType t, const char* op, const char* operand, F&& f) {
  switch (t) {
    case DType::f16:
      return f(Half{});
    case DType::bf16:
      return f(BFloat16{});
    default:
      throw Error(fmt::format("{}: {} is {}, expected f16 or bf16", op, operand, dtype_name(t)));
  }
}

}  // namespace pfc::cpu
