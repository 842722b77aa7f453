// CPU pieces of the PartialFC head: L2 normalisation of embeddings and class centres, row
// gather/scatter of sampled centres, and the margin softmax split into the steps between
// which the ranks all-reduce (row max, then row sum), with arcface_torch's optional
// inter-class filtering of negatives before it and the exact margin gradient (the seed's)
// after it. Row reductions accumulate in double. Every loop splits the rows over the OpenMP
// threads; a row's reduction stays on one thread, in order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/margin_derivative.h"
#include "backend/operand_checks.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// torch.nn.functional.normalize's eps: y = x / max(||x||, eps).
constexpr double kNormEps = 1e-12;

// arcface_torch's CombinedMarginLoss on the target's clamped cosine c (before the scale).
double margin_target(double c, const MarginParams& m) {
  // CosFace (and no margin at all) subtract from the cosine itself, with no round trip
  // through acos that would perturb it.
  if (m.m1 == 1.0 && m.m2 == 0.0) return c - m.m3;
  return std::cos(m.m1 * std::acos(c) + m.m2) - m.m3;
}

// local_label [rows] i64 (checked), each in [-1, classes); -1 means the target lives on
// another rank.
const std::int64_t* checked_labels(const Tensor& label, std::int64_t rows, std::int64_t classes,
                                   const char* op) {
  const std::int64_t* l = label.data<std::int64_t>();
  for (std::int64_t b = 0; b < rows; ++b)
    PFC_CHECK(l[b] >= -1 && l[b] < classes, "{}: local_label[{}] = {} is outside [-1, {})", op, b,
              l[b], classes);
  return l;
}

// Rows per thread below which a loop over rows of `columns` values stays on one thread.
std::int64_t rows_grain(std::int64_t columns) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(columns, 1));
}

// Bytes of one row of t (all dimensions after the first).
std::size_t row_bytes(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : t.bytes() / static_cast<std::size_t>(t.dim(0));
}


}  // namespace

void CpuBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) {
  operand_check::l2_normalize_rows(rules_, x, y, norms);
  cpu::dispatch_float(x.dtype(), "l2_normalize_rows", "x", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t rows = x.dim(0), d = x.dim(1);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    T* pn = norms.data<T>();
    parallel_for(rows, rows_grain(d), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t r = first; r < last; ++r) {
        double sq = 0.0;
        for (std::int64_t j = 0; j < d; ++j) sq += static_cast<double>(px[r * d + j]) * px[r * d + j];
        const double norm = std::sqrt(sq);
        const T inv = static_cast<T>(1.0 / std::max(norm, kNormEps));
        pn[r] = static_cast<T>(norm);
        for (std::int64_t j = 0; j < d; ++j) py[r * d + j] = px[r * d + j] * inv;
      }
    });
  });
}

void CpuBackend::l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                            Tensor& dx) {
  operand_check::l2_normalize_rows_backward(rules_, dy, y, norms, dx);
  cpu::dispatch_float(y.dtype(), "l2_normalize_rows_backward", "y", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t rows = y.dim(0), d = y.dim(1);
    const T* pdy = dy.data<T>();
    const T* py = y.data<T>();
    const T* pn = norms.data<T>();
    T* pdx = dx.data<T>();
    parallel_for(rows, rows_grain(d), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t r = first; r < last; ++r) {
        const T* dyr = pdy + r * d;
        const T* yr = py + r * d;
        T* dxr = pdx + r * d;
        if (pn[r] > kNormEps) {
          // dx = (I - y y^T) dy / ||x||
          double dot = 0.0;
          for (std::int64_t j = 0; j < d; ++j) dot += static_cast<double>(yr[j]) * dyr[j];
          const T inv = static_cast<T>(1.0 / pn[r]);
          const T proj = static_cast<T>(dot);
          for (std::int64_t j = 0; j < d; ++j) dxr[j] = (dyr[j] - yr[j] * proj) * inv;
        } else {
          // The clamped norm is the constant eps: no gradient flows through it.
          const T inv = static_cast<T>(1.0 / kNormEps);
          for (std::int64_t j = 0; j < d; ++j) dxr[j] = dyr[j] * inv;
        }
      }
    });
  });
}

void CpuBackend::gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  const char* op = "gather_rows";
  operand_check::gather_rows(rules_, src, index, dst);
  const std::int64_t* idx = cpu::checked_indices(index, src.dim(0), op);
  const std::size_t rb = row_bytes(src);
  const auto* in = static_cast<const char*>(src.raw());
  auto* out = static_cast<char*>(dst.raw());
  parallel_for(index.numel(), rows_grain(static_cast<std::int64_t>(rb) / 4),
               [&](std::int64_t first, std::int64_t last) {
                 for (std::int64_t i = first; i < last; ++i)
                   std::memcpy(out + static_cast<std::size_t>(i) * rb,
                               in + static_cast<std::size_t>(idx[i]) * rb, rb);
               });
}

void CpuBackend::scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) {
  const char* op = "scatter_rows";
  operand_check::scatter_rows(rules_, src, index, dst);
  const std::int64_t* idx = cpu::checked_indices(index, dst.dim(0), op);
  const std::size_t rb = row_bytes(src);
  const auto* in = static_cast<const char*>(src.raw());
  auto* out = static_cast<char*>(dst.raw());
  parallel_for(index.numel(), rows_grain(static_cast<std::int64_t>(rb) / 4),
               [&](std::int64_t first, std::int64_t last) {
                 for (std::int64_t i = first; i < last; ++i)
                   std::memcpy(out + static_cast<std::size_t>(idx[i]) * rb,
                               in + static_cast<std::size_t>(i) * rb, rb);
               });
}

void CpuBackend::margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams& margin,
                               Tensor& row_max) {
  const char* op = "margin_logits";
  operand_check::margin_logits(rules_, cos, local_label, row_max);
  const std::int64_t rows = cos.dim(0), classes = cos.dim(1);
  const std::int64_t* label = checked_labels(local_label, rows, classes, op);
  cpu::dispatch_float(cos.dtype(), op, "cos", [&](auto tag) {
    using T = decltype(tag);
    T* pc = cos.data<T>();
    T* pm = row_max.data<T>();
    const T s = static_cast<T>(margin.scale);
    parallel_for(rows, rows_grain(classes), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t b = first; b < last; ++b) {
        T* row = pc + b * classes;
        for (std::int64_t j = 0; j < classes; ++j) row[j] = std::clamp(row[j], T(-1), T(1));
        if (label[b] >= 0) row[label[b]] = static_cast<T>(margin_target(row[label[b]], margin));
        T best = -std::numeric_limits<T>::infinity();
        for (std::int64_t j = 0; j < classes; ++j) {
          row[j] *= s;
          best = std::max(best, row[j]);
        }
        pm[b] = best;
      }
    });
  });
}

void CpuBackend::exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) {
  operand_check::exp_and_row_sum(rules_, logits, global_max, row_sum);
  cpu::dispatch_float(logits.dtype(), "exp_and_row_sum", "logits", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t rows = logits.dim(0), classes = logits.dim(1);
    T* pl = logits.data<T>();
    const T* pm = global_max.data<T>();
    T* ps = row_sum.data<T>();
    parallel_for(rows, rows_grain(classes), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t b = first; b < last; ++b) {
        T* row = pl + b * classes;
        double sum = 0.0;
        for (std::int64_t j = 0; j < classes; ++j) {
          row[j] = std::exp(row[j] - pm[b]);
          sum += row[j];
        }
        ps[b] = static_cast<T>(sum);
      }
    });
  });
}

void CpuBackend::softmax_grad(Tensor& exp_logits, const Tensor& global_sum,
                              const Tensor& local_label, double scale, std::int64_t global_batch,
                              Tensor& target_prob) {
  const char* op = "softmax_grad";
  operand_check::softmax_grad(rules_, exp_logits, global_sum, local_label, global_batch,
                              target_prob);
  const std::int64_t rows = exp_logits.dim(0), classes = exp_logits.dim(1);
  const std::int64_t* label = checked_labels(local_label, rows, classes, op);
  cpu::dispatch_float(exp_logits.dtype(), op, "exp_logits", [&](auto tag) {
    using T = decltype(tag);
    T* pe = exp_logits.data<T>();
    const T* ps = global_sum.data<T>();
    T* pt = target_prob.data<T>();
    // d loss / d cos = scale * (p - onehot) / global_batch, the margin passed straight through.
    const T k = static_cast<T>(scale / static_cast<double>(global_batch));
    parallel_for(rows, rows_grain(classes), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t b = first; b < last; ++b) {
        T* row = pe + b * classes;
        const T inv_sum = static_cast<T>(1.0 / static_cast<double>(ps[b]));
        for (std::int64_t j = 0; j < classes; ++j) row[j] *= inv_sum;
        pt[b] = label[b] >= 0 ? row[label[b]] : T(0);
        if (label[b] >= 0) row[label[b]] -= T(1);
        for (std::int64_t j = 0; j < classes; ++j) row[j] *= k;
      }
    });
  });
}

void CpuBackend::interclass_filter(Tensor& cos, const Tensor& local_label, double threshold,
                                   Tensor& keep) {
  const char* op = "interclass_filter";
  operand_check::interclass_filter(rules_, cos, local_label, keep);
  const std::int64_t rows = cos.dim(0), classes = cos.dim(1);
  const std::int64_t* label = checked_labels(local_label, rows, classes, op);
  cpu::dispatch_float(cos.dtype(), op, "cos", [&](auto tag) {
    using T = decltype(tag);
    T* pc = cos.data<T>();
    std::uint8_t* pk = keep.data<std::uint8_t>();
    parallel_for(rows, rows_grain(classes), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t b = first; b < last; ++b)
        for (std::int64_t j = 0; j < classes; ++j) {
          const std::int64_t i = b * classes + j;
          const bool filtered = j != label[b] && static_cast<double>(pc[i]) > threshold;
          pk[i] = filtered ? 0 : 1;
          if (filtered) pc[i] = T(0);
        }
    });
  });
}

void CpuBackend::interclass_filter_backward(Tensor& grad, const Tensor& keep) {
  const char* op = "interclass_filter_backward";
  operand_check::interclass_filter_backward(rules_, grad, keep);
  cpu::dispatch_float(grad.dtype(), op, "grad", [&](auto tag) {
    using T = decltype(tag);
    T* pg = grad.data<T>();
    const std::uint8_t* pk = keep.data<std::uint8_t>();
    parallel_for(grad.numel(), kElementGrain, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t i = first; i < last; ++i)
        if (pk[i] == 0) pg[i] = T(0);
    });
  });
}

void CpuBackend::margin_gradient_factor(const Tensor& cos, const Tensor& local_label,
                                        const MarginParams& margin, Tensor& factor) {
  const char* op = "margin_gradient_factor";
  operand_check::margin_gradient_factor(rules_, cos, local_label, factor);
  const std::int64_t rows = cos.dim(0), classes = cos.dim(1);
  const std::int64_t* label = checked_labels(local_label, rows, classes, op);
  cpu::dispatch_float(cos.dtype(), op, "cos", [&](auto tag) {
    using T = decltype(tag);
    const T* pc = cos.data<T>();
    T* pf = factor.data<T>();
    for (std::int64_t b = 0; b < rows; ++b) {
      if (label[b] < 0) {
        pf[b] = T(1);
        continue;
      }
      // Clamped as margin_logits clamps it (a NaN stays NaN).
      const double c = std::clamp(static_cast<double>(pc[b * classes + label[b]]), -1.0, 1.0);
      pf[b] = static_cast<T>(margin_derivative(c, margin.m1, margin.m2));
    }
  });
}

void CpuBackend::scale_target_column(Tensor& grad, const Tensor& local_label,
                                     const Tensor& factor) {
  const char* op = "scale_target_column";
  operand_check::scale_target_column(rules_, grad, local_label, factor);
  const std::int64_t rows = grad.dim(0), classes = grad.dim(1);
  const std::int64_t* label = checked_labels(local_label, rows, classes, op);
  cpu::dispatch_float(grad.dtype(), op, "grad", [&](auto tag) {
    using T = decltype(tag);
    T* pg = grad.data<T>();
    const T* pf = factor.data<T>();
    for (std::int64_t b = 0; b < rows; ++b)
      if (label[b] >= 0) pg[b * classes + label[b]] *= pf[b];
  });
}

}  // namespace pfc
