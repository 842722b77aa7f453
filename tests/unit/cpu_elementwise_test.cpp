// CpuBackend elementwise arithmetic and reductions: add (with its gradient), axpy, scale,
// the f64-accumulated sum of squares, the inf/NaN check, and the unsupported-dtype error.
#include <gtest/gtest.h>

#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

TEST(CpuElementwise, AddAxpyScaleMatchDefinitions) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor a = random_uniform({5, 7}, t, 1);
    const Tensor b = random_uniform({5, 7}, t, 2);
    Tensor y = Tensor::host({5, 7}, t);
    backend.add(a, b, y);
    Tensor z = Tensor::host({5, 7}, t);
    backend.copy(b, z);
    backend.axpy(-0.75, a, z);
    backend.scale(z, 3.0);
    for (std::int64_t i = 0; i < a.numel(); ++i) {
      EXPECT_NEAR(element(y, i), element(a, i) + element(b, i), 1e-6);
      EXPECT_NEAR(element(z, i), 3.0 * (element(b, i) - 0.75 * element(a, i)), 1e-6);
    }
  }
}

TEST(CpuElementwise, AddInPlaceAliasesItsInput) {
  CpuBackend backend;
  Tensor a = random_uniform({3, 4}, DType::f32, 3);
  const Tensor b = random_uniform({3, 4}, DType::f32, 4);
  Tensor before = Tensor::host({3, 4}, DType::f32);
  backend.copy(a, before);
  backend.add(a, b, a);
  for (std::int64_t i = 0; i < a.numel(); ++i)
    EXPECT_FLOAT_EQ(element(a, i), element(before, i) + element(b, i));
}

TEST(CpuElementwise, AddGradientMatchesFiniteDifferences) {
  CpuBackend backend;
  test::check_gradients(
      {{"a", random_uniform({4, 3}, DType::f64, 5)}, {"b", random_uniform({4, 3}, DType::f64, 6)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host({4, 3}, DType::f64);
        backend.add(in[0], in[1], y);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>&, const std::vector<Tensor>& dout) {
        // The gradient of a sum reaches both addends unchanged (the residual shortcut).
        Tensor da = Tensor::host({4, 3}, DType::f64), db = Tensor::host({4, 3}, DType::f64);
        backend.copy(dout[0], da);
        backend.copy(dout[0], db);
        return std::vector<Tensor>{da, db};
      });
}

TEST(CpuElementwise, SumOfSquaresAccumulatesInDouble) {
  CpuBackend backend;
  // 2^22 values of 0.1f: a float accumulator would stall far below the true sum.
  Tensor x = Tensor::host({1 << 22}, DType::f32);
  backend.fill(x, 0.1);
  const double v = static_cast<double>(0.1f);
  EXPECT_NEAR(backend.sum_of_squares(x), v * v * (1 << 22), 1e-9 * v * v * (1 << 22));

  const Tensor y = random_uniform({17, 3}, DType::f64, 7);
  double want = 0.0;
  for (std::int64_t i = 0; i < y.numel(); ++i) want += element(y, i) * element(y, i);
  EXPECT_NEAR(backend.sum_of_squares(y), want, 1e-13);
}

TEST(CpuElementwise, AllFiniteSeesInfinityAndNaN) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor x = random_uniform({100}, t, 8);
    EXPECT_TRUE(backend.all_finite(x));
    for (double bad :
         {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN()}) {
      Tensor y = Tensor::host({100}, t);
      backend.copy(x, y);
      Tensor last = y.rows(99, 100);
      backend.fill(last, bad);
      EXPECT_FALSE(backend.all_finite(y)) << bad << " in " << y.describe();
    }
  }
}

TEST(CpuElementwise, UnsupportedDtypeIsNamed) {
  CpuBackend backend;
  Tensor x = Tensor::host({4}, DType::f16);
  try {
    backend.scale(x, 2.0);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scale: x is f16"), std::string::npos) << e.what();
  }
  Tensor a = Tensor::host({4}, DType::f32), b = Tensor::host({5}, DType::f32);
  EXPECT_THROW(backend.add(a, b, a), Error);
}

}  // namespace
}  // namespace pfc
