// CpuBackend dense algebra: GEMM in every transpose combination against a triple loop, and a
// Linear layer (gemm + add_row_vector forward, gemm + sum_rows backward) against finite
// differences.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

// alpha * op(a) * op(b) + beta * c as an f64 triple loop, for [m, n] results.
Tensor triple_loop(bool ta, bool tb, double alpha, const Tensor& a, const Tensor& b, double beta,
                   const Tensor& c) {
  const std::int64_t m = c.dim(0), n = c.dim(1), k = ta ? a.dim(0) : a.dim(1);
  Tensor want = Tensor::host({m, n}, DType::f64);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < k; ++p)
        sum += element(a, ta ? p * m + i : i * k + p) * element(b, tb ? j * k + p : p * n + j);
      want.data<double>()[i * n + j] = alpha * sum + beta * element(c, i * n + j);
    }
  return want;
}

// m = 1 runs as a matrix-vector product (cpu_kernel_support.h); beta = 0 must overwrite C.
TEST(CpuGemm, EveryTransposeMatchesTripleLoop) {
  CpuBackend backend;
  const std::int64_t n = 5, k = 9;
  for (std::int64_t m : {7, 1}) {
    for (double beta : {-0.5, 0.0}) {
      const double alpha = 1.5;
      for (DType t : {DType::f32, DType::f64}) {
        for (bool ta : {false, true}) {
          for (bool tb : {false, true}) {
            const Tensor a = random_uniform(ta ? Shape{k, m} : Shape{m, k}, t, 1);
            const Tensor b = random_uniform(tb ? Shape{n, k} : Shape{k, n}, t, 2);
            Tensor c = random_uniform({m, n}, t, 3);
            const Tensor want = triple_loop(ta, tb, alpha, a, b, beta, c);
            if (beta == 0.0) backend.fill(c, std::nan(""));
            backend.gemm(ta, tb, alpha, a, b, beta, c);
            test::expect_tensors_near(c, want, 1e-5, 1e-5,
                                      fmt::format("{} m={} beta={} ta={} tb={}", dtype_name(t),
                                                  m, beta, ta, tb));
          }
        }
      }
    }
  }
}

// f16 operands (the fp16 classifier) and bf16 ones (the CPU's fp16 backbone) with an f32
// result: each product is exact and only the f32 sum rounds, so the result equals an f64
// triple loop over the 16-bit values to f32 accuracy.
TEST(CpuGemm, HalfOperandsAccumulateInF32) {
  CpuBackend backend;
  const std::int64_t m = 6, n = 4, k = 300;
  for (DType half : {DType::f16, DType::bf16}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = Tensor::host(ta ? Shape{k, m} : Shape{m, k}, half);
        Tensor b = Tensor::host(tb ? Shape{n, k} : Shape{k, n}, half);
        backend.cast(random_uniform(a.shape(), DType::f32, 4), a);
        backend.cast(random_uniform(b.shape(), DType::f32, 5), b);
        Tensor c = Tensor::host({m, n}, DType::f32);
        backend.fill(c, 2.0);
        const Tensor want = triple_loop(ta, tb, 0.25, a, b, 0.5, c);
        backend.gemm(ta, tb, 0.25, a, b, 0.5, c);
        test::expect_tensors_near(
            c, want, 1e-5, 1e-5, fmt::format("{} ta={} tb={}", dtype_name(half), ta, tb));
      }
    }
  }
}

TEST(CpuGemm, HalfOperandsNeedAnF32Result) {
  CpuBackend backend;
  for (DType half : {DType::f16, DType::bf16}) {
    const Tensor a = Tensor::host({2, 3}, half);
    const Tensor b = Tensor::host({3, 2}, half);
    Tensor c = Tensor::host({2, 2}, half);
    EXPECT_THROW(backend.gemm(false, false, 1.0, a, b, 0.0, c), Error) << dtype_name(half);
  }
}

TEST(CpuGemm, EmptyInnerDimensionScalesC) {
  CpuBackend backend;
  const Tensor a = Tensor::host({3, 0}, DType::f32);
  const Tensor b = Tensor::host({0, 2}, DType::f32);
  Tensor c = Tensor::host({3, 2}, DType::f32);
  backend.fill(c, 4.0);
  backend.gemm(false, false, 1.0, a, b, 0.5, c);
  for (std::int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.data<float>()[i], 2.0f);
}

TEST(CpuGemm, RejectsMismatchedInnerDimensions) {
  CpuBackend backend;
  const Tensor a = Tensor::host({3, 4}, DType::f32);
  const Tensor b = Tensor::host({5, 2}, DType::f32);
  Tensor c = Tensor::host({3, 2}, DType::f32);
  EXPECT_THROW(backend.gemm(false, false, 1.0, a, b, 0.0, c), Error);
}

TEST(CpuGemm, RowVectorAndRowSums) {
  CpuBackend backend;
  Tensor x = random_uniform({6, 4}, DType::f32, 4);
  const Tensor bias = random_uniform({4}, DType::f32, 5);
  Tensor before = Tensor::host({6, 4}, DType::f32);
  backend.copy(x, before);
  backend.add_row_vector(x, bias);
  Tensor sums = Tensor::host({4}, DType::f32);
  backend.sum_rows(before, sums);
  for (std::int64_t j = 0; j < 4; ++j) {
    double want = 0.0;
    for (std::int64_t r = 0; r < 6; ++r) {
      EXPECT_FLOAT_EQ(element(x, r * 4 + j), element(before, r * 4 + j) + element(bias, j));
      want += element(before, r * 4 + j);
    }
    EXPECT_NEAR(element(sums, j), want, 1e-6);
  }
}

// y = x W^T + b, as torch.nn.Linear; the backbone's fc layer.
TEST(CpuGemm, LinearGradientsMatchFiniteDifferences) {
  CpuBackend backend;
  const std::int64_t batch = 4, in = 6, out = 3;
  test::check_gradients(
      {{"x", random_uniform({batch, in}, DType::f64, 6)},
       {"weight", random_uniform({out, in}, DType::f64, 7)},
       {"bias", random_uniform({out}, DType::f64, 8)}},
      [&](const std::vector<Tensor>& p) {
        Tensor y = Tensor::host({batch, out}, DType::f64);
        backend.gemm(false, true, 1.0, p[0], p[1], 0.0, y);
        backend.add_row_vector(y, p[2]);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& p, const std::vector<Tensor>& dout) {
        Tensor dx = Tensor::host({batch, in}, DType::f64);
        Tensor dw = Tensor::host({out, in}, DType::f64);
        Tensor db = Tensor::host({out}, DType::f64);
        backend.gemm(false, false, 1.0, dout[0], p[1], 0.0, dx);
        backend.gemm(true, false, 1.0, dout[0], p[0], 0.0, dw);
        backend.sum_rows(dout[0], db);
        return std::vector<Tensor>{dx, dw, db};
      });
}

}  // namespace
}  // namespace pfc
