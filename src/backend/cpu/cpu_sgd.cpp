// CPU SGD with momentum and weight decay, PyTorch's torch.optim.SGD (dampening 0, no
// Nesterov): g' = g + wd * w; m = mu * m + g'; w -= lr * m. A zero momentum buffer makes the
// first step m = g', as PyTorch's lazily created buffer does. The row variant updates only
// the sampled class centres of a PartialFC shard. Stored 16-bit weights and momentum
// (classifier_storage) are read into the gradient's type and written back rounded
// stochastically (cpu_stored_values.h).
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/cpu_stored_values.h"
#include "backend/cpu/sorted_row_cursor.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

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

// The update of rows row_of(i), i = 0, 1, ... count - 1 in that order, of stored 16-bit w and
// m [rows, d], with gradient row grad_row_of(i) of g (-1: a zero gradient).
template <class RowOf, class GradRowOf>
void update_stored_rows(Tensor& w, Tensor& m, const Tensor& g, std::int64_t count, RowOf row_of,
                        GradRowOf grad_row_of, double lr, double momentum, double weight_decay,
                        const StochasticRounding& rounding, const char* op) {
  const std::int64_t d = w.dim(1);
  const std::uint64_t w_stream = rounding_stream(rounding.key, RoundedTensor::weight);
  const std::uint64_t m_stream = rounding_stream(rounding.key, RoundedTensor::first_moment);
  cpu::dispatch_float(g.dtype(), op, "g", [&](auto t) {
    using T = decltype(t);
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    cpu::dispatch_stored(w.dtype(), op, "w", [&](auto sw) {
      cpu::dispatch_stored(m.dtype(), op, "m", [&](auto sm) {
        using SW = decltype(sw);
        using SM = decltype(sm);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t row = row_of(i), grad_row = grad_row_of(i);
          const auto first = static_cast<std::uint64_t>((rounding.first_row + row) * d);
          update(d, cpu::StoredValues<T, SW>{w.data<SW>() + row * d, w_stream, first},
                 grad_row < 0 ? zero.data() : g.data<T>() + grad_row * d,
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
    const auto same = [](std::int64_t i) { return i; };
    update_stored_rows(w, m, g, w.dim(0), same, same, lr, momentum, weight_decay, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
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
                                 double lr, double momentum, double weight_decay,
                                 const StochasticRounding& rounding) {
  const char* op = "sgd_update_rows";
  operand_check::sgd_update_rows(rules_, w, m, index, g);
  const std::int64_t* idx = cpu::checked_indices(index, w.dim(0), op);
  if (is_16bit_float(w.dtype())) {
    update_stored_rows(
        w, m, g, index.numel(), [idx](std::int64_t i) { return idx[i]; },
        [](std::int64_t i) { return i; }, lr, momentum, weight_decay, rounding, op);
    return;
  }
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
                                        double weight_decay, const StochasticRounding& rounding) {
  const char* op = "sgd_update_sparse_grad";
  operand_check::sgd_update_sparse_grad(rules_, w, m, index, g);
  const std::int64_t* idx = cpu::checked_sorted_indices(index, w.dim(0), op);
  if (is_16bit_float(w.dtype())) {
    cpu::SortedRowCursor grad_row(idx, index.numel());
    update_stored_rows(
        w, m, g, w.dim(0), [](std::int64_t r) { return r; }, grad_row, lr, momentum,
        weight_decay, rounding, op);
    return;
  }
  cpu::dispatch_float(w.dtype(), op, "w", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t d = w.dim(1);
    // A row without a gradient takes a zero one: the very arithmetic of a dense zero gradient.
    const std::vector<T> zero(static_cast<std::size_t>(d), T(0));
    cpu::SortedRowCursor place(idx, index.numel());
    for (std::int64_t r = 0; r < w.dim(0); ++r) {
      const std::int64_t at = place(r);
      const T* gr = at >= 0 ? g.data<T>() + at * d : zero.data();
      update(d, w.data<T>() + r * d, gr, m.data<T>() + r * d, static_cast<T>(lr),
             static_cast<T>(momentum), static_cast<T>(weight_decay));
    }
  });
}

}  // namespace pfc
