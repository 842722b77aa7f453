// CpuBackend's inter-class filtering against its definition (arcface_torch's
// CombinedMarginLoss): negatives above the threshold become 0, the target column never does,
// a row whose target lives on another rank (-1) has every column filtered alike; the keep mask
// records it and the backward zeroes exactly those gradients. f32 and f64.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

Tensor labels(std::initializer_list<std::int64_t> values) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size())}, DType::i64);
  std::int64_t i = 0;
  for (std::int64_t v : values) t.data<std::int64_t>()[i++] = v;
  return t;
}

TEST(CpuInterclassFilter, FiltersNegativesAboveThresholdOnly) {
  CpuBackend backend;
  const std::int64_t rows = 4, classes = 9;
  const double threshold = 0.2;
  // Row 3 holds a target whose cosine is above the threshold: it must stay.
  const Tensor label = labels({2, -1, 8, 0});
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor cos0 = random_uniform({rows, classes}, t, 31);
    Tensor cos = random_uniform({rows, classes}, t, 31);
    Tensor keep = Tensor::host({rows, classes}, DType::u8);
    backend.interclass_filter(cos, label, threshold, keep);
    Tensor grad = random_uniform({rows, classes}, t, 32);
    const Tensor grad0 = random_uniform({rows, classes}, t, 32);
    backend.interclass_filter_backward(grad, keep);
    int filtered = 0;
    for (std::int64_t b = 0; b < rows; ++b)
      for (std::int64_t j = 0; j < classes; ++j) {
        const std::int64_t i = b * classes + j;
        const bool target = j == label.data<std::int64_t>()[b];
        const bool expect_filtered = !target && element(cos0, i) > threshold;
        filtered += expect_filtered;
        EXPECT_EQ(keep.data<std::uint8_t>()[i], expect_filtered ? 0 : 1) << b << "," << j;
        EXPECT_EQ(element(cos, i), expect_filtered ? 0.0 : element(cos0, i)) << b << "," << j;
        EXPECT_EQ(element(grad, i), expect_filtered ? 0.0 : element(grad0, i)) << b << "," << j;
      }
    EXPECT_GT(filtered, 4) << "the inputs should exercise the filter";
  }
}

TEST(CpuInterclassFilter, KeepsAnAboveThresholdTarget) {
  CpuBackend backend;
  Tensor cos = Tensor::host({1, 3}, DType::f32);
  cos.data<float>()[0] = 0.9f;
  cos.data<float>()[1] = 0.95f;
  cos.data<float>()[2] = 0.05f;
  Tensor keep = Tensor::host({1, 3}, DType::u8);
  backend.interclass_filter(cos, labels({1}), 0.1, keep);
  EXPECT_EQ(cos.data<float>()[0], 0.0f);
  EXPECT_EQ(cos.data<float>()[1], 0.95f);
  EXPECT_EQ(cos.data<float>()[2], 0.05f);
}

TEST(CpuInterclassFilter, ChecksOperands) {
  CpuBackend backend;
  Tensor cos = random_uniform({2, 3}, DType::f32, 1);
  Tensor keep_f32 = Tensor::host({2, 3}, DType::f32);
  EXPECT_THROW(backend.interclass_filter(cos, labels({0, 1}), 0.1, keep_f32), Error);
  Tensor keep = Tensor::host({2, 3}, DType::u8);
  EXPECT_THROW(backend.interclass_filter(cos, labels({0, 3}), 0.1, keep), Error);
  Tensor keep_small = Tensor::host({2, 2}, DType::u8);
  EXPECT_THROW(backend.interclass_filter_backward(cos, keep_small), Error);
}

}  // namespace
}  // namespace pfc
