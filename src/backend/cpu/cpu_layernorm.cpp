// CPU LayerNorm over the last dimension of x [rows, width], as torch.nn.LayerNorm: each row's
// mean and biased variance accumulated in f64 whatever the element type (f32 over partial sums,
// which vectorise: lane_sum.h). The f32 path then normalises in f32, as PyTorch's does: within
// a few units in the last place of the f64 path, at sixteen lanes to a register where f64
// fills eight; a bf16 y (inference, for a bf16 product to read) gets those values rounded once.
// On the OpenMP threads:
// the rows split for y and dx; the channels split for dgamma and dbeta, so each channel's sum
// keeps its order (the same bits on any number of threads).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/isa_clones.h"
#include "backend/cpu/lane_sum.h"
#include "backend/operand_checks.h"
#include "core/bfloat16.h"
#include "core/float16_bits.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

std::int64_t row_grain(std::int64_t width) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(width, 1));
}

// One row: its mean and invstd, and y. f64 sums in order: the oracle.
template <class P>
void forward_row(std::int64_t width, const double* x, const P* gamma, const P* beta, double eps,
                 double* y, double& mean, double& invstd) {
  double sum = 0.0;
  for (std::int64_t c = 0; c < width; ++c) sum += x[c];
  mean = sum / static_cast<double>(width);
  double squares = 0.0;
  for (std::int64_t c = 0; c < width; ++c) squares += (x[c] - mean) * (x[c] - mean);
  invstd = 1.0 / std::sqrt(squares / static_cast<double>(width) + eps);
  for (std::int64_t c = 0; c < width; ++c) y[c] = (x[c] - mean) * invstd * gamma[c] + beta[c];
}

// f32: the statistics in f64, summed over partial sums so that the row vectorises (AVX-512
// where the CPU has it); then y = (x - mean) * invstd * gamma + beta in f32, given to
// store(c, value). y may be x.
template <class Store>
[[gnu::always_inline]] inline void forward_row(std::int64_t width, const float* x,
                                               const float* gamma, const float* beta, double eps,
                                               double& mean, double& invstd, const Store& store) {
  mean = cpu::lane_sum(width, [&](std::int64_t c) { return static_cast<double>(x[c]); }) /
         static_cast<double>(width);
  const double m = mean;
  const double squares = cpu::lane_sum(width, [&](std::int64_t c) {
    const double d = x[c] - m;
    return d * d;
  });
  invstd = 1.0 / std::sqrt(squares / static_cast<double>(width) + eps);
  const float mf = static_cast<float>(m), s = static_cast<float>(invstd);
  for (std::int64_t c = 0; c < width; ++c) store(c, (x[c] - mf) * s * gamma[c] + beta[c]);
}

PFC_ISA_CLONES
void forward_row(std::int64_t width, const float* x, const float* gamma, const float* beta,
                 double eps, float* y, double& mean, double& invstd) {
  forward_row(width, x, gamma, beta, eps, mean, invstd, [&](std::int64_t c, float v) { y[c] = v; });
}

// A bf16 y, for a bf16 product to read (inference): each value rounded once, as a cast after
// the f32 row would.
PFC_ISA_CLONES
void forward_row(std::int64_t width, const float* x, const float* gamma, const float* beta,
                 double eps, std::uint16_t* y, double& mean, double& invstd) {
  forward_row(width, x, gamma, beta, eps, mean, invstd,
              [&](std::int64_t c, float v) { y[c] = bf16_bits_nearest(v); });
}

template <class T, class P, class Y>
void forward(std::int64_t rows, std::int64_t width, const T* x, const P* gamma, const P* beta,
             double eps, Y* y, T* saved_mean, T* saved_invstd) {
  parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      double mean = 0.0, invstd = 0.0;
      forward_row(width, x + r * width, gamma, beta, eps, y + r * width, mean, invstd);
      saved_mean[r] = static_cast<T>(mean);
      saved_invstd[r] = static_cast<T>(invstd);
    }
  });
}

// dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) with g = gamma * dy, per row.
template <class T, class P>
void backward(std::int64_t rows, std::int64_t width, const T* dy, const T* x, const P* gamma,
              const T* saved_mean, const T* saved_invstd, T* dx, P* dgamma, P* dbeta) {
  const double n = static_cast<double>(width);
  std::vector<double> dg(width, 0.0), db(width, 0.0);
  parallel_for(width, rows >= kElementGrain ? 1 : width, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const double mean = saved_mean[r], invstd = saved_invstd[r];
      for (std::int64_t c = c0; c < c1; ++c) {
        const double g = dy[r * width + c];
        dg[c] += g * (x[r * width + c] - mean) * invstd;
        db[c] += g;
      }
    }
  });
  parallel_for(rows, row_grain(width), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const T* xr = x + r * width;
      const T* dyr = dy + r * width;
      const double mean = saved_mean[r], invstd = saved_invstd[r];
      double sum_g = 0.0, sum_g_xhat = 0.0;
      for (std::int64_t c = 0; c < width; ++c) {
        const double g = static_cast<double>(gamma[c]) * dyr[c];
        sum_g += g;
        sum_g_xhat += g * (xr[c] - mean) * invstd;
      }
      T* dxr = dx + r * width;
      for (std::int64_t c = 0; c < width; ++c) {
        const double xhat = (xr[c] - mean) * invstd;
        const double g = static_cast<double>(gamma[c]) * dyr[c];
        dxr[c] = static_cast<T>(invstd * (g - sum_g / n - xhat * sum_g_xhat / n));
      }
    }
  });
  for (std::int64_t c = 0; c < width; ++c) {
    dgamma[c] = static_cast<P>(dg[c]);
    dbeta[c] = static_cast<P>(db[c]);
  }
}

}  // namespace

void CpuBackend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   double eps, Tensor& y, Tensor& saved_mean,
                                   Tensor& saved_invstd) {
  const char* op = "layernorm_forward";
  const auto [rows, width] =
      operand_check::layernorm_forward(rules_, x, gamma, beta, y, saved_mean, saved_invstd);
  if (y.dtype() == DType::bf16) {
    forward(rows, width, x.data<float>(), gamma.data<float>(), beta.data<float>(), eps,
            reinterpret_cast<std::uint16_t*>(y.data<BFloat16>()), saved_mean.data<float>(),
            saved_invstd.data<float>());
    return;
  }
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    using T = decltype(xt);
    cpu::dispatch_param<T>(gamma.dtype(), op, "gamma", [&](auto pt) {
      using P = decltype(pt);
      forward(rows, width, x.data<T>(), gamma.data<P>(), beta.data<P>(), eps, y.data<T>(),
              saved_mean.data<T>(), saved_invstd.data<T>());
    });
  });
}

void CpuBackend::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& saved_mean, const Tensor& saved_invstd,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const char* op = "layernorm_backward";
  const auto [rows, width] = operand_check::layernorm_backward(
      rules_, dy, x, gamma, saved_mean, saved_invstd, dx, dgamma, dbeta);
  cpu::dispatch_float(x.dtype(), op, "x", [&](auto xt) {
    using T = decltype(xt);
    cpu::dispatch_param<T>(gamma.dtype(), op, "gamma", [&](auto pt) {
      using P = decltype(pt);
      backward(rows, width, dy.data<T>(), x.data<T>(), gamma.data<P>(), saved_mean.data<T>(),
               saved_invstd.data<T>(), dx.data<T>(), dgamma.data<P>(), dbeta.data<P>());
    });
  });
}

}  // namespace pfc
