// CPU SGD with momentum and weight decay, PyTorch's torch.optim.SGD (dampening 0, no
// Nesterov): g' = g + wd * w; m = mu * m + g'; w -= lr * m. A zero momentum buffer makes the
// first step m = g', as PyTorch's lazily created buffer does. The row variant updates only
// the sampled class centres of a PartialFC shard.
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

template <class T>
void update(std::int64_t n, T* w, const T* g, T* m, T lr, T mu, T wd) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T gi = g[i] + wd * w[i];
    m[i] = mu * m[i] + gi;
    w[i] -= lr * m[i];
  }
}

}  // namespace

void CpuBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                            double weight_decay) {
  operand_check::sgd_update(rules_, w, g, m);
  cpu::dispatch_float(w.dtype(), "sgd_update", "w", [&](auto tag) {
    using T = decltype(tag);
    T* pw = w.data<T>();
    const T* pg = g.data<T>();
    T* pm = m.data<T>();
    parallel_for(w.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      update(end - begin, pw + begin, pg + begin, pm + begin, static_cast<T>(lr),
             static_cast<T>(momentum), static_cast<T>(weight_decay));
    });
  });
}

void CpuBackend::sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                 double lr, double momentum, double weight_decay) {
  const char* op = "sgd_update_rows";
  operand_check::sgd_update_rows(rules_, w, m, index, g);
  const std::int64_t* idx = cpu::checked_indices(index, w.dim(0), op);
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t d = w.dim(1);
    T* pw = w.data<T>();
    T* pm = m.data<T>();
    const T* pg = g.data<T>();
    parallel_for(index.numel(), kElementGrain / std::max<std::int64_t>(d, 1),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t i = begin; i < end; ++i)
                     update(d, pw + idx[i] * d, pg + i * d, pm + idx[i] * d, static_cast<T>(lr),
                            static_cast<T>(momentum), static_cast<T>(weight_decay));
                 });
  });
}

void CpuBackend::sgd_update_sparse_grad(Tensor& w, Tensor& m, const Tensor& index,
                                        const Tensor& g, double lr, double momentum,
                                        double weight_decay) {
  const char* op = "sgd_update_sparse_grad";
  operand_check::sgd_update_sparse_grad(rules_, w, m, index, g);
  const std::int64_t* idx = cpu::checked_sorted_indices(index, w.dim(0), op);
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t d = w.dim(1);
    // A row without a gradient takes a zero one: the very arithmetic of a dense zero gradient.
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    std::int64_t next = 0;
    for (std::int64_t r = 0; r < w.dim(0); ++r) {
      const bool sampled = next < index.numel() && idx[next] == r;
      const T* gr = sampled ? g.data<T>() + next++ * d : zero.data();
      update(d, w.data<T>() + r * d, gr, m.data<T>() + r * d, static_cast<T>(lr),
             static_cast<T>(momentum), static_cast<T>(weight_decay));
    }
  });
}

}  // namespace pfc
