// sum_row_gradients: two micro-batches' class-centre gradients over different sampled rows add
// up over the sorted union of the rows; a row in one of them keeps its gradient; either may
// be empty. A plan's sum (no index) takes the rows as disjoint, up to the shard.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "pfc/row_gradient_sum.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

RowGradient rows_of(CpuBackend& backend, std::vector<std::int64_t> index, std::uint64_t seed) {
  RowGradient g;
  g.rows = test::random_uniform({static_cast<std::int64_t>(index.size()), 3}, DType::f32, seed);
  g.device_index = index_on_backend(backend, index, MemoryPurpose::workspace);
  g.index = std::move(index);
  return g;
}

TEST(RowGradientSum, AddsOverTheUnionOfRows) {
  CpuBackend backend;
  const RowGradient a = rows_of(backend, {1, 4, 7}, 1);
  const RowGradient b = rows_of(backend, {0, 4, 9, 12}, 2);
  const RowGradient sum = sum_row_gradients(backend, a, b);
  const std::vector<std::int64_t> rows{0, 1, 4, 7, 9, 12};
  EXPECT_EQ(sum.index, rows);
  ASSERT_EQ(sum.device_index.numel(), 6);
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(sum.device_index.data<std::int64_t>()[i], rows[i]);
  ASSERT_EQ(sum.rows.shape(), (Shape{6, 3}));
  const auto row = [](const RowGradient& g, std::int64_t i, std::int64_t j) {
    return g.rows.data<float>()[i * 3 + j];
  };
  for (std::int64_t j = 0; j < 3; ++j) {
    EXPECT_EQ(row(sum, 0, j), row(b, 0, j));  // row 0: b only
    EXPECT_EQ(row(sum, 1, j), row(a, 0, j));  // row 1: a only
    EXPECT_EQ(row(sum, 2, j), row(a, 1, j) + row(b, 1, j));  // row 4: both, a + b
    EXPECT_EQ(row(sum, 3, j), row(a, 2, j));
    EXPECT_EQ(row(sum, 4, j), row(b, 2, j));
    EXPECT_EQ(row(sum, 5, j), row(b, 3, j));
  }
}

TEST(RowGradientSum, EitherSideMayBeEmpty) {
  CpuBackend backend;
  const RowGradient none = rows_of(backend, {}, 3);
  const RowGradient some = rows_of(backend, {2, 5}, 4);
  for (const auto& [x, y] : {std::pair{&none, &some}, std::pair{&some, &none}}) {
    const RowGradient sum = sum_row_gradients(backend, *x, *y);
    EXPECT_EQ(sum.index, some.index);
    test::expect_tensors_near(sum.rows, some.rows, 0.0, 0.0, "sum with an empty side");
  }
  EXPECT_EQ(sum_row_gradients(backend, none, none).index.size(), 0u);
}

TEST(RowGradientSum, RefusesRowsThatDoNotMatchTheirIndex) {
  CpuBackend backend;
  RowGradient a = rows_of(backend, {1, 2}, 5);
  a.index.push_back(3);
  EXPECT_THROW(sum_row_gradients(backend, a, rows_of(backend, {0}, 6)), Error);
}

// A plan's micro-batches have rows but no index: their union is taken as disjoint, up to the
// whole shard, and its tensors are on the meta device.
TEST(RowGradientSum, APlanCountsTheUnionAsDisjointUpToTheShard) {
  MetaBackend meta(BackendKind::cpu);
  const auto rows = [&](std::int64_t n) {
    RowGradient g;
    g.rows = meta.empty({n, 3}, DType::f32, MemoryPurpose::gradients);
    g.device_index = planned_index_on_backend(meta, n, MemoryPurpose::workspace);
    return g;
  };
  const RowGradient sum = planned_row_gradient_sum(meta, rows(4), rows(5), 100);
  EXPECT_TRUE(sum.index.empty());
  EXPECT_EQ(sum.rows.shape(), (Shape{9, 3}));
  EXPECT_EQ(sum.device_index.shape(), (Shape{9}));
  EXPECT_EQ(sum.rows.device(), DeviceKind::meta);
  EXPECT_EQ(planned_row_gradient_sum(meta, rows(4), rows(5), 6).rows.shape(), (Shape{6, 3}));
  EXPECT_EQ(planned_row_gradient_sum(meta, rows(0), rows(0), 6).rows.shape(), (Shape{0, 3}));
  CpuBackend cpu;
  EXPECT_THROW(planned_index_on_backend(cpu, 3, MemoryPurpose::workspace), Error);
}

}  // namespace
}  // namespace pfc
