// The CPU's elementwise pieces of a Vision Transformer: ReLU6 (the MLP's activation) and its
// backward, and DropPath's per-sample scaling. Independent elements on the OpenMP threads; y
// may be x and dx may be dy. Each loop loads its operands unconditionally and selects, so that
// it vectorises: a branch on the sign of an activation mispredicts half the time.
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
      for (std::int64_t i = first; i < last; ++i) {
        const T v = px[i];
        py[i] = v < T(0) ? T(0) : (v > T(6) ? T(6) : v);
      }
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
      for (std::int64_t i = first; i < last; ++i) {
        const T v = py[i], g = pdy[i];
        pdx[i] = (v > T(0)) & (v < T(6)) ? g : T(0);
      }
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
                     // Sample by sample, so that no element divides its index.
                     for (std::int64_t i = first; i < last;) {
                       const std::int64_t s = i / per_sample;
                       const std::int64_t end = std::min(last, (s + 1) * per_sample);
                       const T f = static_cast<T>(pf[s]);
                       for (; i < end; ++i) py[i] = f * px[i];
                     }
                   });
    });
  });
}

}  // namespace pfc
