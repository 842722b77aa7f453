// CPU PReLU over x [rows, channels] with one slope per channel, as torch.nn.PReLU(channels):
// y = x for x > 0, slope * x otherwise. The slope is f32 or the activation type.
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"

namespace pfc {
namespace {

template <class T, class P>
void forward(std::int64_t rows, std::int64_t channels, const T* x, const P* slope, T* y) {
  std::vector<T> a(slope, slope + channels);
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * channels;
    T* yr = y + r * channels;
    for (std::int64_t c = 0; c < channels; ++c) yr[c] = xr[c] > T(0) ? xr[c] : a[c] * xr[c];
  }
}

template <class T, class P>
void backward(std::int64_t rows, std::int64_t channels, const T* dy, const T* x, const P* slope,
              T* dx, P* dslope) {
  std::vector<T> a(slope, slope + channels);
  std::vector<double> ds(channels, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* dyr = dy + r * channels;
    const T* xr = x + r * channels;
    T* dxr = dx + r * channels;
    for (std::int64_t c = 0; c < channels; ++c) {
      const bool positive = xr[c] > T(0);
      dxr[c] = positive ? dyr[c] : a[c] * dyr[c];
      ds[c] += positive ? 0.0 : static_cast<double>(dyr[c]) * xr[c];
    }
  }
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
