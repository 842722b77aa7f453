// CpuBackend's optimiser updates with a sparse gradient (PartialFC_V2's centres: one dense
// parameter whose gradient lives on the sampled rows): sgd_update_sparse_grad and
// adamw_update_sparse_grad must be bit for bit the dense update given the zero-filled gradient,
// over several steps with a different row set each, in f32 and f64; every row moves even with
// no gradient row at all; and the index must be sorted, unique and inside the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::index_tensor;
using test::random_uniform;

constexpr std::int64_t kRows = 9, kCols = 4;

Tensor copy_of(CpuBackend& backend, const Tensor& t) {
  Tensor c = Tensor::host(t.shape(), t.dtype());
  backend.copy(t, c);
  return c;
}

// The dense gradient: row i of g at rows[i], zero elsewhere.
Tensor zero_filled(CpuBackend& backend, const std::vector<std::int64_t>& rows, const Tensor& g) {
  Tensor dense = Tensor::host({kRows, kCols}, g.dtype());
  backend.fill(dense, 0.0);
  if (!rows.empty()) backend.scatter_rows(g, index_tensor(rows), dense);
  return dense;
}

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  for (std::int64_t i = 0; i < a.numel(); ++i)
    ASSERT_EQ(element(a, i), element(b, i)) << what << " element " << i;
}

const std::vector<std::vector<std::int64_t>> kStepRows = {{1, 4, 8}, {}, {0, 4, 5, 6}};

TEST(CpuSparseGradUpdate, SgdIsTheDenseUpdateOfTheZeroFilledGradient) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor w = random_uniform({kRows, kCols}, t, 1), m = random_uniform({kRows, kCols}, t, 2);
    Tensor dense_w = copy_of(backend, w), dense_m = copy_of(backend, m);
    for (std::size_t s = 0; s < kStepRows.size(); ++s) {
      const auto& rows = kStepRows[s];
      const Tensor g = random_uniform({static_cast<std::int64_t>(rows.size()), kCols}, t, 10 + s);
      backend.sgd_update_sparse_grad(w, m, index_tensor(rows), g, 0.1, 0.9, 5e-4);
      backend.sgd_update(dense_w, zero_filled(backend, rows, g), dense_m, 0.1, 0.9, 5e-4);
    }
    expect_identical(w, dense_w, std::string(dtype_name(t)) + " w");
    expect_identical(m, dense_m, std::string(dtype_name(t)) + " momentum");
  }
}

TEST(CpuSparseGradUpdate, AdamWIsTheDenseUpdateOfTheZeroFilledGradient) {
  CpuBackend backend;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor w = random_uniform({kRows, kCols}, t, 3);
    Tensor m = Tensor::host({kRows, kCols}, t), v = Tensor::host({kRows, kCols}, t);
    backend.fill(m, 0.0);
    backend.fill(v, 0.0);
    Tensor dense_w = copy_of(backend, w), dense_m = copy_of(backend, m),
           dense_v = copy_of(backend, v);
    for (std::size_t s = 0; s < kStepRows.size(); ++s) {
      const auto& rows = kStepRows[s];
      const Tensor g = random_uniform({static_cast<std::int64_t>(rows.size()), kCols}, t, 20 + s);
      AdamWParams p;
      p.lr = 0.01;
      p.weight_decay = 0.1;
      p.step = static_cast<std::int64_t>(s) + 1;
      backend.adamw_update_sparse_grad(w, m, v, index_tensor(rows), g, p);
      backend.adamw_update(dense_w, zero_filled(backend, rows, g), dense_m, dense_v, p);
    }
    expect_identical(w, dense_w, std::string(dtype_name(t)) + " w");
    expect_identical(m, dense_m, std::string(dtype_name(t)) + " exp_avg");
    expect_identical(v, dense_v, std::string(dtype_name(t)) + " exp_avg_sq");
  }
}

TEST(CpuSparseGradUpdate, EveryRowDecaysWithoutAGradient) {
  CpuBackend backend;
  Tensor w = random_uniform({kRows, kCols}, DType::f64, 4);
  const Tensor before = copy_of(backend, w);
  Tensor m = Tensor::host({kRows, kCols}, DType::f64);
  backend.fill(m, 0.0);
  const Tensor g = Tensor::host({0, kCols}, DType::f64);
  backend.sgd_update_sparse_grad(w, m, index_tensor({}), g, 0.1, 0.9, 5e-4);
  // m = wd * w, w -= lr * m: w shrinks by 1 - lr * wd.
  for (std::int64_t i = 0; i < w.numel(); ++i)
    EXPECT_NEAR(element(w, i), element(before, i) * (1 - 0.1 * 5e-4), 1e-15);
}

TEST(CpuSparseGradUpdate, TheIndexMustBeSortedUniqueAndInside) {
  CpuBackend backend;
  Tensor w = random_uniform({kRows, kCols}, DType::f32, 5), m = random_uniform({kRows, kCols},
                                                                               DType::f32, 6);
  Tensor v = random_uniform({kRows, kCols}, DType::f32, 7, 0.0, 1.0);
  const Tensor g = random_uniform({2, kCols}, DType::f32, 8);
  for (const std::vector<std::int64_t>& bad : {std::vector<std::int64_t>{4, 2},
                                               std::vector<std::int64_t>{3, 3},
                                               std::vector<std::int64_t>{1, kRows}}) {
    EXPECT_THROW(backend.sgd_update_sparse_grad(w, m, index_tensor(bad), g, 0.1, 0.9, 5e-4), Error);
    EXPECT_THROW(backend.adamw_update_sparse_grad(w, m, v, index_tensor(bad), g, AdamWParams{}),
                 Error);
  }
  const Tensor g_wide = random_uniform({2, kCols + 1}, DType::f32, 9);
  EXPECT_THROW(backend.sgd_update_sparse_grad(w, m, index_tensor({0, 1}), g_wide, 0.1, 0.9, 5e-4),
               Error);
}

}  // namespace
}  // namespace pfc
