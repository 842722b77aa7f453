// CPU PReLU over x [rows, channels] with one slope per channel, as torch.nn.PReLU(channels):
// y = x for x > 0, slope * x otherwise. The slope is f32 or the activation type. f32
// activations take the vectorised block passes of cpu_channel_passes_f32.h; the loops here are
// the f64 path and their oracle. On the OpenMP threads: the forward pass splits the rows; the
// backward pass the channels, so that each slope's sum keeps its order (the same bits on any
// number of threads).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_channel_passes_f32.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

template <class T, class P>
void forward(std::int64_t rows, std::int64_t channels, const T* x, const P* slope, T* y) {
  std::vector<T> a(slope, slope + channels);
  if constexpr (std::is_same_v<T, float>) {
    cpu::f32_prelu_forward(rows, channels, x, a.data(), y);
    return;
  }
  const std::int64_t grain = std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(channels, 1));
  parallel_for(rows, grain, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* xr = x + r * channels;
      T* yr = y + r * channels;
      for (std::int64_t c = 0; c < channels; ++c) yr[c] = xr[c] > T(0) ? xr[c] : a[c] * xr[c];
    }
  });
}

template <class T, class P>
void backward(std::int64_t rows, std::int64_t channels, const T* dy, const T* x, const P* slope,
              T* dx, P* dslope) {
  std::vector<T> a(slope, slope + channels);
  std::vector<double> ds(channels, 0.0);
  if constexpr (std::is_same_v<T, float>) {
    cpu::f32_prelu_backward(rows, channels, dy, x, a.data(), dx, ds.data());
    for (std::int64_t c = 0; c < channels; ++c) dslope[c] = static_cast<P>(ds[c]);
    return;
  }
  parallel_for(channels, rows >= kElementGrain ? 1 : channels,
               [&](std::int64_t c0, std::int64_t c1) {
                 for (std::int64_t r = 0; r < rows; ++r) {
                   const T* dyr = dy + r * channels;
                   const T* xr = x + r * channels;
                   T* dxr = dx + r * channels;
                   for (std::int64_t c = c0; c < c1; ++c) {
                     const bool positive = xr[c] > T(0);
                     dxr[c] = positive ? dyr[c] : a[c] * dyr[c];
                     ds[c] += positive ? 0.0 : static_cast<double>(dyr[c]) * xr[c];
                   }
                 }
               });
  for (std::int64_t c = 0; c < channels; ++c) dslope[c] = static_cast<P>(ds[c]);
}

}  // namespace

void CpuBackend::prelu_forward(const Tensor& x, const Tensor& slope, Tensor& y) {
  const char* op = "prelu_forward";
  const auto [rows, channels] = operand_check::prelu_forward(rules_, x, slope, y);
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    using T = decltype(xt);
    cpu::dispatch_param<T>(slope.dtype(), op, "slope", [&](auto pt) {
      using P = decltype(pt);
      forward(rows, channels, x.data<T>(), slope.data<P>(), y.data<T>());
    });
  });
}

void CpuBackend::prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope, Tensor& dx,
                                Tensor& dslope) {
  const char* op = "prelu_backward";
  const auto [rows, channels] = operand_check::prelu_backward(rules_, dy, x, slope, dx, dslope);
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    using T = decltype(xt);
    cpu::dispatch_param<T>(slope.dtype(), op, "slope", [&](auto pt) {
      using P = decltype(pt);
      backward(rows, channels, dy.data<T>(), x.data<T>(), slope.data<P>(), dx.data<T>(),
               dslope.data<P>());
    });
  });
}

}  // namespace pfc
