// CPU elementwise arithmetic and whole-tensor reductions (gradient norms, overflow checks).
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"

namespace pfc {

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  operand_check::add(rules_, a, b, y);
  cpu::dispatch_float(a.dtype(), "add", "a", [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    for (std::int64_t i = 0, n = a.numel(); i < n; ++i) py[i] = pa[i] + pb[i];
  });
}

void CpuBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  operand_check::axpy(rules_, x, y);
  cpu::dispatch_float(x.dtype(), "axpy", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const T a = static_cast<T>(alpha);
    for (std::int64_t i = 0, n = x.numel(); i < n; ++i) py[i] += a * px[i];
  });
}

void CpuBackend::scale(Tensor& x, double alpha) {
  operand_check::scale(rules_, x);
  cpu::dispatch_float(x.dtype(), "scale", "x", [&](auto tag) {
    using T = decltype(tag);
    T* px = x.data<T>();
    const T a = static_cast<T>(alpha);
    for (std::int64_t i = 0, n = x.numel(); i < n; ++i) px[i] *= a;
  });
}

double CpuBackend::sum_of_squares(const Tensor& x) {
  operand_check::sum_of_squares(rules_, x);
  return cpu::dispatch_float(x.dtype(), "sum_of_squares", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    double sum = 0.0;
    for (std::int64_t i = 0, n = x.numel(); i < n; ++i) {
      const double v = px[i];
      sum += v * v;
    }
    return sum;
  });
}

bool CpuBackend::all_finite(const Tensor& x) {
  operand_check::all_finite(rules_, x);
  return cpu::dispatch_float(x.dtype(), "all_finite", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    for (std::int64_t i = 0, n = x.numel(); i < n; ++i)
      if (!std::isfinite(px[i])) return false;
    return true;
  });
}

}  // namespace pfc
