// A CPU backend told that the network only runs forward (keep_prepared_filters, as the
// inference commands do) keeps each filter in its oneDNN primitive's layout between calls: the
// results are the same bits as a backend that reorders every call, the prepared copy is made
// once and counted as `weights` (one copy whatever the batch), and a filter whose values
// change (a non-const access, through any view) is prepared again. Skipped in a build without
// oneDNN.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;

Conv2dGeometry layer() {
  Conv2dGeometry g;
  g.batch = 2;
  g.in_h = g.in_w = 14;
  g.in_channels = 64;
  g.out_channels = 64;
  g.kernel = 3;
  g.stride = 1;
  g.pad = 1;
  return g;
}

std::int64_t weights_in_use(CpuBackend& b) {
  return b.allocator().ledger().snapshot().in_use[static_cast<int>(MemoryPurpose::weights)];
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

Tensor forward(CpuBackend& b, const Conv2dGeometry& g, const Tensor& x, const Tensor& w) {
  Tensor y = Tensor::host(g.output_shape(), DType::f32);
  b.conv2d_forward(g, x, w, y);
  return y;
}

Tensor backward_data(CpuBackend& b, const Conv2dGeometry& g, const Tensor& dy, const Tensor& w) {
  Tensor dx = Tensor::host(g.input_shape(), DType::f32);
  b.conv2d_backward_data(g, dy, w, dx);
  return dx;
}

class CpuPreparedFilters : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::onednn_built()) GTEST_SKIP() << "built without oneDNN";
    if (cpu::onednn_prepared_filter_layout(g, cpu::ConvDirection::forward).bytes == 0)
      GTEST_SKIP() << "oneDNN reads this filter in pfc's layout: nothing to prepare";
    kept.keep_prepared_filters();
  }
  const Conv2dGeometry g = layer();
  CpuBackend kept, plain;
};

TEST_F(CpuPreparedFilters, GiveTheSameBitsAndArePreparedOnce) {
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 2);
  const Tensor dy = random_uniform(g.output_shape(), DType::f32, 3);
  const std::int64_t before = weights_in_use(kept);
  EXPECT_TRUE(same_bits(forward(kept, g, x, w), forward(plain, g, x, w)));
  const std::int64_t prepared = weights_in_use(kept) - before;
  EXPECT_GE(prepared, g.out_channels * g.kernel * g.kernel * g.in_channels * 4);
  EXPECT_TRUE(same_bits(forward(kept, g, x, w), forward(plain, g, x, w)));
  EXPECT_EQ(weights_in_use(kept) - before, prepared) << "the filter was prepared twice";
  EXPECT_TRUE(same_bits(backward_data(kept, g, dy, w), backward_data(plain, g, dy, w)));
  EXPECT_TRUE(same_bits(backward_data(kept, g, dy, w), backward_data(plain, g, dy, w)));
  EXPECT_EQ(plain.allocator().ledger().snapshot().in_use[static_cast<int>(MemoryPurpose::weights)],
            0);
}

// Another batch size is another primitive, which may want another layout: the filter is
// prepared again for it, in the one copy, and the results stay those of reordering every call.
TEST_F(CpuPreparedFilters, KeepOneCopyAcrossBatchSizes) {
  const Tensor w = random_uniform(g.filter_shape(), DType::f32, 2);
  Conv2dGeometry one = g;
  one.batch = 1;
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  const Tensor x1 = random_uniform(one.input_shape(), DType::f32, 5);
  EXPECT_TRUE(same_bits(forward(kept, g, x, w), forward(plain, g, x, w)));
  const std::int64_t prepared = weights_in_use(kept);
  EXPECT_TRUE(same_bits(forward(kept, one, x1, w), forward(plain, one, x1, w)));
  EXPECT_TRUE(same_bits(forward(kept, g, x, w), forward(plain, g, x, w)));
  EXPECT_EQ(weights_in_use(kept), prepared);
}

TEST_F(CpuPreparedFilters, FollowNewValuesWrittenThroughAnyView) {
  const Tensor x = random_uniform(g.input_shape(), DType::f32, 1);
  // The filter is a view of a larger buffer, as a model's parameters are of a flat one.
  Tensor flat = random_uniform({2 * shape_numel(g.filter_shape())}, DType::f32, 4);
  const Tensor w = flat.rows(0, shape_numel(g.filter_shape())).reshape(g.filter_shape());
  const Tensor first = forward(kept, g, x, w);
  EXPECT_TRUE(same_bits(first, forward(plain, g, x, w)));
  float* values = flat.data<float>();
  for (std::int64_t i = 0; i < flat.numel(); ++i) values[i] *= -0.5f;
  const Tensor second = forward(kept, g, x, w);
  EXPECT_TRUE(same_bits(second, forward(plain, g, x, w)));
  EXPECT_FALSE(same_bits(first, second));
}

}  // namespace
}  // namespace pfc
