// A row's sum in f64 over eight partial sums, which vectorise where one running sum would add
// one element at a time: the f32 kernels' reductions (LayerNorm, the softmax's backward).
// Always inlined, so that it is compiled for the instruction set of the kernel that calls it
// (isa_clones.h).
#pragma once

#include <cstdint>

namespace pfc::cpu {

// The sum of term(0), ..., term(n - 1).
template <class Term>
[[gnu::always_inline]] inline double lane_sum(std::int64_t n, const Term& term) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += term(i + l);
  double sum = 0.0;
  for (; i < n; ++i) sum += term(i);
  for (const double s : lanes) sum += s;
  return sum;
}

}  // namespace pfc::cpu
