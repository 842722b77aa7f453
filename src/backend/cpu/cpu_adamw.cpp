// CPU AdamW, PyTorch's torch.optim.AdamW (amsgrad off): the decay is decoupled (the weight
// shrinks by lr * wd before the step, the gradient is left alone), and both moments are
// bias-corrected by the update's number t. Zero moments make the first step as PyTorch's
// lazily created state does. The row variant updates only the sampled class centres of a
// PartialFC shard, whose moments travel with them. Stored 16-bit weights and moments
// (classifier_storage) are read into the gradient's type and written back rounded
// stochastically (cpu_stored_values.h).
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/cpu_stored_values.h"
#include "backend/operand_checks.h"

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

// The update of rows row_of(i), i < count, of stored 16-bit w, m and v [rows, d], with
// gradient row i of g.
template <class RowOf>
void update_stored_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& g, std::int64_t count,
                        RowOf row_of, const AdamWParams& p, const AdamWFactors& f,
                        const StochasticRounding& rounding, const char* op) {
  const std::int64_t d = w.dim(1);
  const std::uint64_t w_stream = rounding_stream(rounding.key, RoundedTensor::weight);
  const std::uint64_t m_stream = rounding_stream(rounding.key, RoundedTensor::first_moment);
  const std::uint64_t v_stream = rounding_stream(rounding.key, RoundedTensor::second_moment);
  cpu::dispatch_float(g.dtype(), op, "g", [&](auto t) {
    using T = decltype(t);
    const AdamWStep<T> s(p, f);
    cpu::dispatch_stored(w.dtype(), op, "w", [&](auto sw) {
      cpu::dispatch_stored(m.dtype(), op, "m", [&](auto sm) {
        using SW = decltype(sw);
        using SM = decltype(sm);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t row = row_of(i);
          const auto first = static_cast<std::uint64_t>((rounding.first_row + row) * d);
          s.apply(d, cpu::StoredValues<T, SW>{w.data<SW>() + row * d, w_stream, first},
                  g.data<T>() + i * d,
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
    update_stored_rows(w, m, v, g, w.dim(0), [](std::int64_t i) { return i; }, p, f, rounding,
                       op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    AdamWStep<T>(p, f).apply(w.numel(), w.data<T>(), g.data<T>(), m.data<T>(), v.data<T>());
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
    update_stored_rows(w, m, v, g, index.numel(), [idx](std::int64_t i) { return idx[i]; }, p,
                       f, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const AdamWStep<T> s(p, f);
    const std::int64_t d = w.dim(1);
    for (std::int64_t i = 0; i < index.numel(); ++i) {
      const std::int64_t r = idx[i] * d;
      s.apply(d, w.data<T>() + r, g.data<T>() + i * d, m.data<T>() + r, v.data<T>() + r);
    }
  });
}

}  // namespace pfc
