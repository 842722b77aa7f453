// CPU softmax over the last dimension of x [rows, width] (attention's scores) and its backward.
// The rows split over the OpenMP threads; each element is read before its place is written, so
// y may be x and dx may be dy.
// - f64: the plain loops, each row's sum and dot product in order: the oracle.
// - f32: computed as PyTorch's CPU softmax computes it, in f32: each exponential taken once
//   (exp_nonpositive.h, within about one unit in the last place as PyTorch's), the row's max
//   and sum over sixteen lanes (vector_lanes.h), then one multiplication by the sum's inverse.
//   The backward's dot products are in f64 (lane_sum.h). Written without branches or calls,
//   so the loops vectorise (AVX-512 where the CPU has it, isa_clones.h); f32 fills twice the
//   lanes f64 does, which halves an inference attention's softmax.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/exp_nonpositive.h"
#include "backend/cpu/isa_clones.h"
#include "backend/cpu/lane_sum.h"
#include "backend/cpu/vector_lanes.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

std::int64_t row_grain(std::int64_t width) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(width, 1));
}

PFC_ISA_CLONES
void forward_row(std::int64_t width, const float* x, float* y) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  cpu::F32x16 lanes = cpu::F32x16{} - kInfinity, v;
  std::int64_t c = 0;
  for (; c + 16 <= width; c += 16) {
    cpu::load(v, x + c);
    lanes = lanes < v ? v : lanes;
  }
  float max = cpu::horizontal_max(lanes);
  for (; c < width; ++c) max = max < x[c] ? x[c] : max;
  for (c = 0; c < width; ++c) y[c] = cpu::exp_nonpositive(x[c] - max);
  // Summed in a loop of its own: GCC keeps the partial sums in a register there, where beside
  // the exponentials it stores them every iteration (15 % of the row's time).
  cpu::F32x16 sums = {};
  for (c = 0; c + 16 <= width; c += 16) {
    cpu::load(v, y + c);
    sums += v;
  }
  float sum = cpu::horizontal_sum(sums);
  for (; c < width; ++c) sum += y[c];
  const float inverse = 1.0f / sum;
  for (c = 0; c < width; ++c) y[c] *= inverse;
}

PFC_ISA_CLONES
void backward_row(std::int64_t width, const float* dy, const float* y, float* dx) {
  const double dot = cpu::lane_sum(width, [&](std::int64_t i) {
    return static_cast<double>(dy[i]) * static_cast<double>(y[i]);
  });
  for (std::int64_t c = 0; c < width; ++c)
    dx[c] = static_cast<float>(static_cast<double>(y[c]) * (dy[c] - dot));
}

void forward_row(std::int64_t width, const double* x, double* y) {
  double max = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < width; ++c) max = std::max(max, x[c]);
  double sum = 0.0;
  for (std::int64_t c = 0; c < width; ++c) {
    y[c] = std::exp(x[c] - max);
    sum += y[c];
  }
  for (std::int64_t c = 0; c < width; ++c) y[c] /= sum;
}

void backward_row(std::int64_t width, const double* dy, const double* y, double* dx) {
  double dot = 0.0;
  for (std::int64_t c = 0; c < width; ++c) dot += dy[c] * y[c];
  for (std::int64_t c = 0; c < width; ++c) dx[c] = y[c] * (dy[c] - dot);
}

}  // namespace

void CpuBackend::softmax_rows_forward(const Tensor& x, Tensor& y) {
  const auto [rows, width] = operand_check::softmax_rows_forward(rules_, x, y);
  cpu::dispatch_float(x.dtype(), "softmax_rows_forward", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t r = first; r < last; ++r)
        forward_row(width, px + r * width, py + r * width);
    });
  });
}

void CpuBackend::softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  const auto [rows, width] = operand_check::softmax_rows_backward(rules_, dy, y, dx);
  cpu::dispatch_float(y.dtype(), "softmax_rows_backward", "y", [&](auto tag) {
    using T = decltype(tag);
    const T* pdy = dy.data<T>();
    const T* py = y.data<T>();
    T* pdx = dx.data<T>();
    parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t r = first; r < last; ++r)
        backward_row(width, pdy + r * width, py + r * width, pdx + r * width);
    });
  });
}

}  // namespace pfc
