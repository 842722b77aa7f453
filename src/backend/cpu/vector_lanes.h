// Sixteen f32 or eight f64 lanes as one value (GCC's and Clang's vector extensions), for the
// row reductions of the f32 kernels. Written as arrays indexed lane by lane, GCC 12 kept a
// running max in sixteen scalar registers (the softmax's, 5x slower than one vector), and
// summed the lanes back one by one, a chain of sixteen dependent adds per row. Here a row is
// loaded a vector at a time and reduced in halves. Always inlined, so that each is compiled
// for the instruction set of the kernel that calls it (isa_clones.h): one AVX-512 register
// there, two AVX2 or four SSE registers elsewhere. Passed by reference: a 64-byte vector
// passed by value has no stable calling convention without AVX-512.
#pragma once

#include <cstring>

namespace pfc::cpu {

using F32x16 = float __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));
using F32x4 = float __attribute__((vector_size(16)));
using F64x8 = double __attribute__((vector_size(64)));
using F64x4 = double __attribute__((vector_size(32)));

[[gnu::always_inline]] inline void load(F32x16& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

[[gnu::always_inline]] inline float horizontal_max(const F32x16& v) {
  F32x8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const F32x8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  a = a < b ? b : a;
  F32x4 c = __builtin_shufflevector(a, a, 0, 1, 2, 3);
  const F32x4 d = __builtin_shufflevector(a, a, 4, 5, 6, 7);
  c = c < d ? d : c;
  const float e = c[0] < c[2] ? c[2] : c[0], f = c[1] < c[3] ? c[3] : c[1];
  return e < f ? f : e;
}

[[gnu::always_inline]] inline float horizontal_sum(const F32x16& v) {
  const F32x8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                  __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const F32x4 c =
      __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
  return (c[0] + c[2]) + (c[1] + c[3]);
}

[[gnu::always_inline]] inline double horizontal_sum(const F64x8& v) {
  const F64x4 a =
      __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
  return (a[0] + a[2]) + (a[1] + a[3]);
}

}  // namespace pfc::cpu
