// The CPU's elementwise pieces of a Vision Transformer: ReLU6 (the MLP's activation) and its
// backward, and DropPath's per-sample scaling. Independent elements on the OpenMP threads; y
// may be x and dx may be dy.
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {

void CpuBackend::relu6_forward(const Tensor& x, Tensor& y) {
  operand_check::relu6_forward(rules_, x, y);
  cpu::dispatch_float(x.dtype(), "relu6_forward", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    parallel_for(x.numel(), kElementGrain, [&](std::int64_t first, std::int64_t last) {
      // NaN stays NaN, as torch's hardtanh: neither comparison holds for it.
      for (std::int64_t i = first; i < last; ++i)
        py[i] = px[i] < T(0) ? T(0) : (px[i] > T(6) ? T(6) : px[i]);
    });
  });
}

void CpuBackend::relu6_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  operand_check::relu6_backward(rules_, dy, y, dx);
  cpu::dispatch_float(y.dtype(), "relu6_backward", "y", [&](auto tag) {
    using T = decltype(tag);
    const T* pdy = dy.data<T>();
    const T* py = y.data<T>();
    T* pdx = dx.data<T>();
    parallel_for(y.numel(), kElementGrain, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t i = first; i < last; ++i)
        pdx[i] = py[i] > T(0) && py[i] < T(6) ? pdy[i] : T(0);
    });
  });
}

void CpuBackend::scale_samples(const Tensor& x, const Tensor& factor, Tensor& y) {
  const char* op = "scale_samples";
  const auto [samples, per_sample] = operand_check::scale_samples(rules_, x, factor, y);
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    using T = decltype(xt);
    cpu::dispatch_param<T>(factor.dtype(), op, "factor", [&](auto pt) {
      using P = decltype(pt);
      const T* px = x.data<T>();
      const P* pf = factor.data<P>();
      T* py = y.data<T>();
      parallel_for(samples * per_sample, kElementGrain,
                   [&](std::int64_t first, std::int64_t last) {
                     for (std::int64_t i = first; i < last; ++i)
                       py[i] = static_cast<T>(pf[i / per_sample]) * px[i];
                   });
    });
  });
}

}  // namespace pfc
