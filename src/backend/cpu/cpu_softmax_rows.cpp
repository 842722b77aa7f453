// CPU softmax over the last dimension of x [rows, width] (attention's scores) and its backward,
// each row's sum and dot product in f64. Each exponential is taken once, in the element type (f32
// as PyTorch's CPU softmax takes it; the f64 path stays exact), and kept in y until the row's
// sum divides it. The rows split over the OpenMP threads; each element is read before its place
// is written, so y may be x and dx may be dy.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

std::int64_t row_grain(std::int64_t width) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(width, 1));
}

template <class T>
void forward(std::int64_t rows, std::int64_t width, const T* x, T* y) {
  parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* xr = x + r * width;
      T* yr = y + r * width;
      T max = -std::numeric_limits<T>::infinity();
      for (std::int64_t c = 0; c < width; ++c) max = std::max(max, xr[c]);
      double sum = 0.0;
      for (std::int64_t c = 0; c < width; ++c) {
        const T e = std::exp(xr[c] - max);
        yr[c] = e;
        sum += e;
      }
      for (std::int64_t c = 0; c < width; ++c) yr[c] = static_cast<T>(yr[c] / sum);
    }
  });
}

template <class T>
void backward(std::int64_t rows, std::int64_t width, const T* dy, const T* y, T* dx) {
  parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* dyr = dy + r * width;
      const T* yr = y + r * width;
      double dot = 0.0;
      for (std::int64_t c = 0; c < width; ++c) dot += static_cast<double>(dyr[c]) * yr[c];
      T* dxr = dx + r * width;
      for (std::int64_t c = 0; c < width; ++c)
        dxr[c] = static_cast<T>(static_cast<double>(yr[c]) * (dyr[c] - dot));
    }
  });
}

}  // namespace

void CpuBackend::softmax_rows_forward(const Tensor& x, Tensor& y) {
  const auto [rows, width] = operand_check::softmax_rows_forward(rules_, x, y);
  cpu::dispatch_float(x.dtype(), "softmax_rows_forward", "x", [&](auto tag) {
    using T = decltype(tag);
    forward(rows, width, x.data<T>(), y.data<T>());
  });
}

void CpuBackend::softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  const auto [rows, width] = operand_check::softmax_rows_backward(rules_, dy, y, dx);
  cpu::dispatch_float(y.dtype(), "softmax_rows_backward", "y", [&](auto tag) {
    using T = decltype(tag);
    backward(rows, width, dy.data<T>(), y.data<T>(), dx.data<T>());
  });
}

}  // namespace pfc
