// CPU SGD with momentum and weight decay, PyTorch's torch.optim.SGD (dampening 0, no
// Nesterov): g' = g + wd * w; m = mu * m + g'; w -= lr * m. A zero momentum buffer makes the
// first step m = g', as PyTorch's lazily created buffer does. The row variant updates only
// the sampled class centres of a PartialFC shard. Stored 16-bit weights and momentum
// (classifier_storage) are read into the gradient's type and written back rounded
// stochastically (cpu_stored_values.h).
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/cpu_stored_values.h"
#include "backend/operand_checks.h"

namespace pfc {
namespace {

template <class T, class W, class M>
void update(std::int64_t n, W w, const T* g, M m, T lr, T mu, T wd) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T wi = cpu::load(w, i);
    const T gi = g[i] + wd * wi;
    const T mi = mu * cpu::load(m, i) + gi;
    cpu::store(m, i, mi);
    cpu::store(w, i, wi - lr * mi);
  }
}

// The update of rows row_of(i), i < count, of stored 16-bit w and m [rows, d], with gradient
// row i of g.
template <class RowOf>
void update_stored_rows(Tensor& w, Tensor& m, const Tensor& g, std::int64_t count, RowOf row_of,
                        double lr, double momentum, double weight_decay,
                        const StochasticRounding& rounding, const char* op) {
  const std::int64_t d = w.dim(1);
  const std::uint64_t w_stream = rounding_stream(rounding.key, RoundedTensor::weight);
  const std::uint64_t m_stream = rounding_stream(rounding.key, RoundedTensor::first_moment);
  cpu::dispatch_float(g.dtype(), op, "g", [&](auto t) {
    using T = decltype(t);
    cpu::dispatch_stored(w.dtype(), op, "w", [&](auto sw) {
      cpu::dispatch_stored(m.dtype(), op, "m", [&](auto sm) {
        using SW = decltype(sw);
        using SM = decltype(sm);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t row = row_of(i);
          const auto first = static_cast<std::uint64_t>((rounding.first_row + row) * d);
          update(d, cpu::StoredValues<T, SW>{w.data<SW>() + row * d, w_stream, first},
                 g.data<T>() + i * d,
                 cpu::StoredValues<T, SM>{m.data<SM>() + row * d, m_stream, first},
                 static_cast<T>(lr), static_cast<T>(momentum), static_cast<T>(weight_decay));
        }
      });
    });
  });
}

}  // namespace

void CpuBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                            double weight_decay, const StochasticRounding& rounding) {
  const char* op = "sgd_update";
  operand_check::sgd_update(rules_, w, g, m);
  if (is_16bit_float(w.dtype())) {
    update_stored_rows(w, m, g, w.dim(0), [](std::int64_t i) { return i; }, lr, momentum,
                       weight_decay, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    update(w.numel(), w.data<T>(), g.data<T>(), m.data<T>(), static_cast<T>(lr),
           static_cast<T>(momentum), static_cast<T>(weight_decay));
  });
}

void CpuBackend::sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                 double lr, double momentum, double weight_decay,
                                 const StochasticRounding& rounding) {
  const char* op = "sgd_update_rows";
  operand_check::sgd_update_rows(rules_, w, m, index, g);
  const std::int64_t* idx = cpu::checked_indices(index, w.dim(0), op);
  if (is_16bit_float(w.dtype())) {
    update_stored_rows(w, m, g, index.numel(), [idx](std::int64_t i) { return idx[i]; }, lr,
                       momentum, weight_decay, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t d = w.dim(1);
    T* pw = w.data<T>();
    T* pm = m.data<T>();
    const T* pg = g.data<T>();
    for (std::int64_t i = 0; i < index.numel(); ++i)
      update(d, pw + idx[i] * d, pg + i * d, pm + idx[i] * d, static_cast<T>(lr),
             static_cast<T>(momentum), static_cast<T>(weight_decay));
  });
}

}  // namespace pfc
