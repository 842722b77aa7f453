// A row's sum in f64 over partial sums, which vectorise where one running sum would add one
// element at a time: the f32 kernels' reductions (LayerNorm, the softmax's backward). Four
// vectors of eight lanes, so that four adds are in flight: with one vector, each add waited
// for the one before (LayerNorm's two sums took 0.3 of its 0.43 ns per element; 0.08 now).
// Always inlined, so that it is compiled for the instruction set of the kernel that calls it
// (isa_clones.h).
#pragma once

#include <cstdint>

#include "backend/cpu/vector_lanes.h"

namespace pfc::cpu {

// The sum of term(0), ..., term(n - 1).
template <class Term>
[[gnu::always_inline]] inline double lane_sum(std::int64_t n, const Term& term) {
  F64x8 a = {}, b = {}, c = {}, d = {};
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    F64x8 ta, tb, tc, td;
    for (int l = 0; l < 8; ++l) {
      ta[l] = term(i + l);
      tb[l] = term(i + 8 + l);
      tc[l] = term(i + 16 + l);
      td[l] = term(i + 24 + l);
    }
    a += ta;
    b += tb;
    c += tc;
    d += td;
  }
  for (; i + 8 <= n; i += 8) {
    F64x8 t;
    for (int l = 0; l < 8; ++l) t[l] = term(i + l);
    a += t;
  }
  double sum = horizontal_sum((a + b) + (c + d));
  for (; i < n; ++i) sum += term(i);
  return sum;
}

}  // namespace pfc::cpu
