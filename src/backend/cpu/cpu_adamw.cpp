// CPU AdamW, PyTorch's torch.optim.AdamW (amsgrad off): the decay is decoupled (the weight
// shrinks by lr * wd before the step, the gradient is left alone), and both moments are
// bias-corrected by the update's number t. Zero moments make the first step as PyTorch's
// lazily created state does. The row variant updates only the sampled class centres of a
// PartialFC shard, whose moments travel with them; the sparse-gradient variant updates every
// row as if the gradient were dense and zero off the sampled rows (PartialFC_V2).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// One update's coefficients in the element type.
template <class T>
struct AdamWStep {
  T decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size, bias2_sqrt, eps;

  AdamWStep(const AdamWParams& p, const AdamWFactors& f)
      : decay(static_cast<T>(f.decay)),
        beta1(static_cast<T>(p.beta1)),
        one_minus_beta1(static_cast<T>(1.0 - p.beta1)),
        beta2(static_cast<T>(p.beta2)),
        one_minus_beta2(static_cast<T>(1.0 - p.beta2)),
        step_size(static_cast<T>(f.step_size)),
        bias2_sqrt(static_cast<T>(f.bias2_sqrt)),
        eps(static_cast<T>(p.eps)) {}

  void apply(std::int64_t n, T* w, const T* g, T* m, T* v) const {
    for (std::int64_t i = 0; i < n; ++i) {
      w[i] *= decay;
      m[i] = beta1 * m[i] + one_minus_beta1 * g[i];
      v[i] = beta2 * v[i] + one_minus_beta2 * g[i] * g[i];
      w[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + eps);
    }
  }
};

}  // namespace

void CpuBackend::adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                              const AdamWParams& p) {
  const char* op = "adamw_update";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update(rules_, w, g, m, v);
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const AdamWStep<T> s(p, f);
    T* pw = w.data<T>();
    const T* pg = g.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    parallel_for(w.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      s.apply(end - begin, pw + begin, pg + begin, pm + begin, pv + begin);
    });
  });
}

void CpuBackend::adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                   const Tensor& g, const AdamWParams& p) {
  const char* op = "adamw_update_rows";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update_rows(rules_, w, m, v, index, g);
  const std::int64_t* idx = cpu::checked_indices(index, w.dim(0), op);
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const AdamWStep<T> s(p, f);
    const std::int64_t d = w.dim(1);
    T* pw = w.data<T>();
    const T* pg = g.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    parallel_for(index.numel(), kElementGrain / std::max<std::int64_t>(d, 1),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t i = begin; i < end; ++i) {
                     const std::int64_t r = idx[i] * d;
                     s.apply(d, pw + r, pg + i * d, pm + r, pv + r);
                   }
                 });
  });
}

void CpuBackend::adamw_update_sparse_grad(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                          const Tensor& g, const AdamWParams& p) {
  const char* op = "adamw_update_sparse_grad";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update_sparse_grad(rules_, w, m, v, index, g);
  const std::int64_t* idx = cpu::checked_sorted_indices(index, w.dim(0), op);
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const AdamWStep<T> s(p, f);
    const std::int64_t d = w.dim(1);
    // A row without a gradient takes a zero one: the very arithmetic of a dense zero gradient.
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    std::int64_t next = 0;
    for (std::int64_t row = 0; row < w.dim(0); ++row) {
      const bool sampled = next < index.numel() && idx[next] == row;
      const T* gr = sampled ? g.data<T>() + next++ * d : zero.data();
      const std::int64_t r = row * d;
      s.apply(d, w.data<T>() + r, gr, m.data<T>() + r, v.data<T>() + r);
    }
  });
}

}  // namespace pfc
