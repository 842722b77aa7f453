// CPU AdamW, PyTorch's torch.optim.AdamW (amsgrad off): the decay is decoupled (the weight
// shrinks by lr * wd before the step, the gradient is left alone), and both moments are
// bias-corrected by the update's number t. Zero moments make the first step as PyTorch's
// lazily created state does. The row variant updates only the sampled class centres of a
// PartialFC shard, whose moments travel with them; the sparse-gradient variant updates every
// row as if the gradient were dense and zero off the sampled rows (PartialFC_V2). Stored 16-bit
// weights and moments (classifier_storage) are read into the gradient's type and written back
// rounded stochastically (cpu_stored_values.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/cpu_stored_values.h"
#include "backend/cpu/sorted_row_cursor.h"
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

  template <class W, class M, class V>
  void apply(std::int64_t n, W w, const T* g, M m, V v) const {
    for (std::int64_t i = 0; i < n; ++i) {
      const T wi = cpu::load(w, i) * decay;
      const T mi = beta1 * cpu::load(m, i) + one_minus_beta1 * g[i];
      const T vi = beta2 * cpu::load(v, i) + one_minus_beta2 * g[i] * g[i];
      cpu::store(m, i, mi);
      cpu::store(v, i, vi);
      cpu::store(w, i, wi - step_size * mi / (std::sqrt(vi) / bias2_sqrt + eps));
    }
  }
};

// The update of rows row_of(i), i = 0, 1, ... count - 1 in that order, of stored 16-bit w, m
// and v [rows, d], with gradient row grad_row_of(i) of g (-1: a zero gradient).
template <class RowOf, class GradRowOf>
void update_stored_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& g, std::int64_t count,
                        RowOf row_of, GradRowOf grad_row_of, const AdamWParams& p,
                        const AdamWFactors& f, const StochasticRounding& rounding,
                        const char* op) {
  const std::int64_t d = w.dim(1);
  const std::uint64_t w_stream = rounding_stream(rounding.key, RoundedTensor::weight);
  const std::uint64_t m_stream = rounding_stream(rounding.key, RoundedTensor::first_moment);
  const std::uint64_t v_stream = rounding_stream(rounding.key, RoundedTensor::second_moment);
  cpu::dispatch_float(g.dtype(), op, "g", [&](auto t) {
    using T = decltype(t);
    const AdamWStep<T> s(p, f);
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    cpu::dispatch_stored(w.dtype(), op, "w", [&](auto sw) {
      cpu::dispatch_stored(m.dtype(), op, "m", [&](auto sm) {
        using SW = decltype(sw);
        using SM = decltype(sm);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t row = row_of(i), grad_row = grad_row_of(i);
          const auto first = static_cast<std::uint64_t>((rounding.first_row + row) * d);
          s.apply(d, cpu::StoredValues<T, SW>{w.data<SW>() + row * d, w_stream, first},
                  grad_row < 0 ? zero.data() : g.data<T>() + grad_row * d,
                  cpu::StoredValues<T, SM>{m.data<SM>() + row * d, m_stream, first},
                  cpu::StoredValues<T, SM>{v.data<SM>() + row * d, v_stream, first});
        }
      });
    });
  });
}

}  // namespace

void CpuBackend::adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                              const AdamWParams& p, const StochasticRounding& rounding) {
  const char* op = "adamw_update";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update(rules_, w, g, m, v);
  if (is_16bit_float(w.dtype())) {
    const auto same = [](std::int64_t i) { return i; };
    update_stored_rows(w, m, v, g, w.dim(0), same, same, p, f, rounding, op);
    return;
  }
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
                                   const Tensor& g, const AdamWParams& p,
                                   const StochasticRounding& rounding) {
  const char* op = "adamw_update_rows";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update_rows(rules_, w, m, v, index, g);
  const std::int64_t* idx = cpu::checked_indices(index, w.dim(0), op);
  if (is_16bit_float(w.dtype())) {
    update_stored_rows(
        w, m, v, g, index.numel(), [idx](std::int64_t i) { return idx[i]; },
        [](std::int64_t i) { return i; }, p, f, rounding, op);
    return;
  }
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
                                          const Tensor& g, const AdamWParams& p,
                                          const StochasticRounding& rounding) {
  const char* op = "adamw_update_sparse_grad";
  const AdamWFactors f = adamw_factors(p, op);
  operand_check::adamw_update_sparse_grad(rules_, w, m, v, index, g);
  const std::int64_t* idx = cpu::checked_sorted_indices(index, w.dim(0), op);
  if (is_16bit_float(w.dtype())) {
    cpu::SortedRowCursor grad_row(idx, index.numel());
    update_stored_rows(
        w, m, v, g, w.dim(0), [](std::int64_t r) { return r; }, grad_row, p, f, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const AdamWStep<T> s(p, f);
    const std::int64_t d = w.dim(1);
    // A row without a gradient takes a zero one: the very arithmetic of a dense zero gradient.
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    cpu::SortedRowCursor place(idx, index.numel());
    for (std::int64_t row = 0; row < w.dim(0); ++row) {
      const std::int64_t at = place(row);
      const T* gr = at >= 0 ? g.data<T>() + at * d : zero.data();
      const std::int64_t r = row * d;
      s.apply(d, w.data<T>() + r, gr, m.data<T>() + r, v.data<T>() + r);
    }
  });
}

}  // namespace pfc
