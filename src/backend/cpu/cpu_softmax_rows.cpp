// CPU softmax over the last dimension of x [rows, width] (attention's scores)
// and its backward. The rows split over the OpenMP threads; each element is
// read before its place is written, so y may be x and dx may be dy.
// - f64: the plain loops, each row's sum and dot product in order: the oracle.
// - f32: each exponential is taken once and rounded once to f32, as PyTorch's
// CPU softmax takes
//   it, by exp_nonpositive below; sums and dot products in f64 over eight lanes (lane_sum.h).
//   Written without branches or calls, so the loops vectorise (AVX-512 where
//   the CPU has it, isa_clones.h).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/isa_clones.h"
#include "backend/cpu/lane_sum.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

std::int64_t row_grain(std::int64_t width) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(width, 1));
}

// exp(d) in f64 for d <= 0, to about 1e-15 relative, so that rounding it to f32 gives the
// correctly rounded value (checked against every f32 in [-150, 0]; the C library's expf is
// within 0.502 units in the last place). d = k ln2 + r with |r| <= ln2 / 2; ln2 in two parts
// (fdlibm's), the first with trailing zeros so that k times it is exact; exp(r) by its Taylor
// series to r^13; 2^k put into the exponent bits. d below -150, where every result rounds to an
// f32 0, is taken as -150 (-inf too); NaN stays NaN.
inline double exp_nonpositive(float f) {
  // Selected on the bits by a mask: GCC 12 vectorises no select here, floating-point or not.
  // The f32 values below -150 are the bit patterns above -150's up to -inf's.
  constexpr std::uint32_t kMinus150 = std::bit_cast<std::uint32_t>(-150.0f);
  constexpr std::uint32_t kMinusInfinity = std::bit_cast<std::uint32_t>(-HUGE_VALF);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t below =
      0u - static_cast<std::uint32_t>(bits - kMinus150 - 1 < kMinusInfinity - kMinus150);
  const double d = std::bit_cast<float>((bits & ~below) | (kMinus150 & below));
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kRound = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits
  const double shifted = d * kLog2e + kRound;
  const double k = shifted - kRound;
  const double r = (d - k * kLn2Hi) - k * kLn2Lo;
  // Horner's rule written out: a loop over the coefficients would keep the caller's loop from
  // vectorising.
  const double p =
      1.0 +
      r * (1.0 +
           r * (1.0 / 2 +
                r * (1.0 / 6 +
                     r * (1.0 / 24 +
                          r * (1.0 / 120 +
                               r * (1.0 / 720 +
                                    r * (1.0 / 5040 +
                                         r * (1.0 / 40320 +
                                              r * (1.0 / 362880 +
                                                   r * (1.0 / 3628800 +
                                                        r * (1.0 / 39916800 +
                                                             r * (1.0 / 479001600 +
                                                                  r / 6227020800.0))))))))))));
  // The low bits of `shifted` hold k (two's complement); k + 1023 is 2^k's biased exponent.
  const std::uint64_t scale = (std::bit_cast<std::uint64_t>(shifted) + 1023) << 52;
  return p * std::bit_cast<double>(scale);
}

PFC_ISA_CLONES
void forward_row_f32(std::int64_t width, const float* x, float* y) {
  float lanes[16];
  std::fill(lanes, lanes + 16, -std::numeric_limits<float>::infinity());
  std::int64_t c = 0;
  for (; c + 16 <= width; c += 16)
    for (int l = 0; l < 16; ++l) lanes[l] = lanes[l] < x[c + l] ? x[c + l] : lanes[l];
  float max = -std::numeric_limits<float>::infinity();
  for (; c < width; ++c) max = max < x[c] ? x[c] : max;
  for (const float v : lanes) max = max < v ? v : max;
  for (c = 0; c < width; ++c) y[c] = static_cast<float>(exp_nonpositive(x[c] - max));
  const double sum = cpu::lane_sum(width, [&](std::int64_t i) { return static_cast<double>(y[i]); });
  for (c = 0; c < width; ++c) y[c] = static_cast<float>(y[c] / sum);
}

PFC_ISA_CLONES
void backward_row_f32(std::int64_t width, const float* dy, const float* y, float* dx) {
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

void forward_row(std::int64_t width, const float* x, float* y) { forward_row_f32(width, x, y); }

void backward_row(std::int64_t width, const float* dy, const float* y, float* dx) {
  backward_row_f32(width, dy, y, dx);
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
