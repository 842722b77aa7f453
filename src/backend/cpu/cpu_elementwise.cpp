// CPU elementwise arithmetic and whole-tensor reductions (gradient norms, overflow checks), on
// the OpenMP threads. A whole-tensor sum adds fixed blocks, then the blocks' sums in order, so
// it is the same on any number of threads.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// Elements summed in one block of sum_of_squares.
constexpr std::int64_t kSumBlock = 65536;

}  // namespace

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  operand_check::add(rules_, a, b, y);
  cpu::dispatch_float(a.dtype(), "add", "a", [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    parallel_for(a.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) py[i] = pa[i] + pb[i];
    });
  });
}

void CpuBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  operand_check::axpy(rules_, x, y);
  cpu::dispatch_float(x.dtype(), "axpy", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const T a = static_cast<T>(alpha);
    parallel_for(x.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) py[i] += a * px[i];
    });
  });
}

void CpuBackend::scale(Tensor& x, double alpha) {
  operand_check::scale(rules_, x);
  cpu::dispatch_float(x.dtype(), "scale", "x", [&](auto tag) {
    using T = decltype(tag);
    T* px = x.data<T>();
    const T a = static_cast<T>(alpha);
    parallel_for(x.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) px[i] *= a;
    });
  });
}

double CpuBackend::sum_of_squares(const Tensor& x) {
  operand_check::sum_of_squares(rules_, x);
  return cpu::dispatch_float(x.dtype(), "sum_of_squares", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    const std::int64_t n = x.numel(), blocks = (n + kSumBlock - 1) / kSumBlock;
    std::vector<double> partial(static_cast<std::size_t>(blocks), 0.0);
    parallel_for(blocks, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t b = first; b < last; ++b) {
        double sum = 0.0;
        for (std::int64_t i = b * kSumBlock, end = std::min(n, i + kSumBlock); i < end; ++i) {
          const double v = px[i];
          sum += v * v;
        }
        partial[static_cast<std::size_t>(b)] = sum;
      }
    });
    double sum = 0.0;
    for (double p : partial) sum += p;
    return sum;
  });
}

bool CpuBackend::all_finite(const Tensor& x) {
  operand_check::all_finite(rules_, x);
  return cpu::dispatch_float(x.dtype(), "all_finite", "x", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    std::atomic<bool> finite{true};
    parallel_for(x.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        if (!std::isfinite(px[i])) {
          finite = false;
          return;
        }
    });
    return finite.load();
  });
}

}  // namespace pfc
