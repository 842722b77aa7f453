// CpuBackend PartialFC pieces: L2 normalisation (values, gradient, zero rows), row gather and
// scatter, the ArcFace / CosFace / combined margins against hand-computed numbers, and the
// split margin softmax (two class shards, one row's target on each) whose gradient must be
// that of the cross-entropy of the scaled logits, checked by finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::index_tensor;
using test::random_uniform;

Tensor f64_tensor(const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::host(shape, DType::f64);
  std::copy(values.begin(), values.end(), t.data<double>());
  return t;
}

TEST(CpuL2Normalize, RowsHaveUnitNormAndNormsAreKept) {
  CpuBackend backend;
  const Tensor x = random_uniform({5, 8}, DType::f32, 1, -3.0, 3.0);
  Tensor y = Tensor::host({5, 8}, DType::f32), norms = Tensor::host({5}, DType::f32);
  backend.l2_normalize_rows(x, y, norms);
  for (std::int64_t r = 0; r < 5; ++r) {
    double sq = 0.0;
    for (std::int64_t j = 0; j < 8; ++j) sq += element(x, r * 8 + j) * element(x, r * 8 + j);
    EXPECT_NEAR(element(norms, r), std::sqrt(sq), 1e-5);
    for (std::int64_t j = 0; j < 8; ++j)
      EXPECT_NEAR(element(y, r * 8 + j), element(x, r * 8 + j) / std::sqrt(sq), 1e-6);
  }
}

TEST(CpuL2Normalize, ZeroRowStaysZeroAndItsGradientIsOverEps) {
  // torch.nn.functional.normalize divides by max(||x||, 1e-12); past the clamp the norm is
  // a constant, so dx = dy / 1e-12.
  CpuBackend backend;
  Tensor x = Tensor::host({1, 3}, DType::f64);
  backend.fill(x, 0.0);
  Tensor y = Tensor::host({1, 3}, DType::f64), norms = Tensor::host({1}, DType::f64);
  backend.l2_normalize_rows(x, y, norms);
  EXPECT_EQ(element(norms, 0), 0.0);
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(element(y, j), 0.0);
  const Tensor dy = f64_tensor({1, 3}, {1.0, -2.0, 0.5});
  Tensor dx = Tensor::host({1, 3}, DType::f64);
  backend.l2_normalize_rows_backward(dy, y, norms, dx);
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(element(dx, j), element(dy, j) * 1e12);
}

TEST(CpuL2Normalize, GradientMatchesFiniteDifferences) {
  CpuBackend backend;
  test::check_gradients(
      {{"x", random_uniform({4, 6}, DType::f64, 2, -2.0, 2.0)}},
      [&](const std::vector<Tensor>& in) {
        Tensor y = Tensor::host({4, 6}, DType::f64), norms = Tensor::host({4}, DType::f64);
        backend.l2_normalize_rows(in[0], y, norms);
        return std::vector<Tensor>{y};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor y = Tensor::host({4, 6}, DType::f64), norms = Tensor::host({4}, DType::f64);
        backend.l2_normalize_rows(in[0], y, norms);
        Tensor dx = Tensor::host({4, 6}, DType::f64);
        backend.l2_normalize_rows_backward(dout[0], y, norms, dx);
        return std::vector<Tensor>{dx};
      });
}

TEST(CpuRows, GatherAndScatterMoveWholeRows) {
  CpuBackend backend;
  const Tensor table = random_uniform({6, 3}, DType::f32, 3);
  const Tensor index = index_tensor({4, 0, 5});
  Tensor picked = Tensor::host({3, 3}, DType::f32);
  backend.gather_rows(table, index, picked);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(element(picked, i * 3 + j), element(table, index.data<std::int64_t>()[i] * 3 + j));

  Tensor dst = Tensor::host({6, 3}, DType::f32);
  backend.fill(dst, -7.0);
  backend.scatter_rows(picked, index, dst);
  for (std::int64_t r = 0; r < 6; ++r)
    for (std::int64_t j = 0; j < 3; ++j) {
      const bool written = r == 4 || r == 0 || r == 5;
      EXPECT_EQ(element(dst, r * 3 + j), written ? element(table, r * 3 + j) : -7.0) << r;
    }

  // Any element type moves: labels are i64 rows.
  const Tensor labels = index_tensor({10, 11, 12, 13});
  Tensor some = Tensor::host({2}, DType::i64);
  backend.gather_rows(labels, index_tensor({3, 1}), some);
  EXPECT_EQ(some.data<std::int64_t>()[0], 13);
  EXPECT_EQ(some.data<std::int64_t>()[1], 11);
}

TEST(CpuRows, OutOfRangeIndexIsNamed) {
  CpuBackend backend;
  const Tensor table = random_uniform({6, 3}, DType::f32, 3);
  Tensor picked = Tensor::host({2, 3}, DType::f32);
  try {
    backend.gather_rows(table, index_tensor({1, 6}), picked);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gather_rows: index[1] = 6 is outside [0, 6)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(backend.gather_rows(table, Tensor::host({2}, DType::i32), picked), Error);
}

// Row b has cosines {cos_b[0], cos_b[1], cos_b[2]} and its target at labels[b].
void expect_margin(const MarginParams& m, const std::vector<double>& cos,
                   const std::vector<std::int64_t>& labels, const std::vector<double>& want) {
  CpuBackend backend;
  const std::int64_t rows = static_cast<std::int64_t>(labels.size());
  Tensor logits = f64_tensor({rows, 3}, cos);
  Tensor row_max = Tensor::host({rows}, DType::f64);
  backend.margin_logits(logits, index_tensor(labels), m, row_max);
  for (std::int64_t i = 0; i < logits.numel(); ++i)
    EXPECT_NEAR(element(logits, i), want[i], 1e-12) << "element " << i;
  for (std::int64_t b = 0; b < rows; ++b)
    EXPECT_EQ(element(row_max, b),
              *std::max_element(want.begin() + 3 * b, want.begin() + 3 * b + 3));
}

TEST(CpuMargin, ArcFaceAddsAngleToTargetOnly) {
  // cos(acos(0.5) + 0.5) = 0.5 cos 0.5 - (sqrt(3)/2) sin 0.5 = 0.02359658529090937;
  // cos(acos(-0.25) + 0.5) = -0.6835974221627431; a target cosine 1.3 is clamped to 1:
  // cos(0.5) = 0.8775825618903728; the non-target -1.7 is clamped to -1.
  const MarginParams arc{1.0, 0.5, 0.0, 64.0};
  expect_margin(arc, {0.5, 0.2, -0.3, 0.1, -0.25, 0.7, 1.3, -1.7, 0.0}, {0, 1, 0},
                {64 * 0.02359658529090937, 64 * 0.2, 64 * -0.3, 64 * 0.1, 64 * -0.6835974221627431,
                 64 * 0.7, 64 * 0.8775825618903728, -64.0, 0.0});
}

TEST(CpuMargin, CosFaceSubtractsFromTargetOnly) {
  const MarginParams cosface{1.0, 0.0, 0.4, 64.0};
  expect_margin(cosface, {0.5, 0.2, -0.3, 0.1, -0.25, 0.7}, {2, -1},
                {64 * 0.5, 64 * 0.2, 64 * -0.7, 64 * 0.1, 64 * -0.25, 64 * 0.7});
}

TEST(CpuMargin, CombinedMarginAppliesAllThree) {
  // (1, 0.3, 0.2): cos(acos(0.5) + 0.3) - 0.2 = 0.021740238262455497;
  // (1.2, 0.1, 0.05): cos(1.2 acos(0.5) + 0.1) - 0.05 = 0.16252597509879368.
  expect_margin({1.0, 0.3, 0.2, 30.0}, {0.1, 0.5, 0.2}, {1}, {3.0, 30 * 0.021740238262455497, 6.0});
  expect_margin({1.2, 0.1, 0.05, 10.0}, {0.5, -0.5, 0.25}, {0},
                {10 * 0.16252597509879368, -5.0, 2.5});
}

// The split softmax over shards holding columns [0, split) and [split, classes) of cos:
// what the ranks of a PartialFC group do between their all-reduces (max, then sum).
struct ShardedSoftmax {
  Tensor grad;                      // d loss / d cos, [batch, classes]
  std::vector<double> target_prob;  // per row, summed over shards
};

ShardedSoftmax sharded_softmax(const Tensor& cos, const std::vector<std::int64_t>& labels,
                               std::int64_t split, const MarginParams& margin) {
  CpuBackend backend;
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  const std::int64_t starts[2] = {0, split}, ends[2] = {split, classes};
  Tensor logits[2], label[2], row_max[2], row_sum[2], target[2];
  for (int s = 0; s < 2; ++s) {
    const std::int64_t width = ends[s] - starts[s];
    logits[s] = Tensor::host({batch, width}, DType::f64);
    std::vector<std::int64_t> local(batch);
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t j = 0; j < width; ++j)
        logits[s].data<double>()[b * width + j] = element(cos, b * classes + starts[s] + j);
      const bool mine = labels[b] >= starts[s] && labels[b] < ends[s];
      local[b] = mine ? labels[b] - starts[s] : -1;
    }
    label[s] = index_tensor(local);
    row_max[s] = Tensor::host({batch}, DType::f64);
    row_sum[s] = Tensor::host({batch}, DType::f64);
    target[s] = Tensor::host({batch}, DType::f64);
    backend.margin_logits(logits[s], label[s], margin, row_max[s]);
  }
  Tensor global_max = Tensor::host({batch}, DType::f64);
  for (std::int64_t b = 0; b < batch; ++b)
    global_max.data<double>()[b] = std::max(element(row_max[0], b), element(row_max[1], b));
  for (int s = 0; s < 2; ++s) backend.exp_and_row_sum(logits[s], global_max, row_sum[s]);
  Tensor global_sum = Tensor::host({batch}, DType::f64);
  backend.add(row_sum[0], row_sum[1], global_sum);
  ShardedSoftmax out{Tensor::host(cos.shape(), DType::f64), std::vector<double>(batch)};
  for (int s = 0; s < 2; ++s) {
    backend.softmax_grad(logits[s], global_sum, label[s], margin.scale, batch, target[s]);
    const std::int64_t width = ends[s] - starts[s];
    for (std::int64_t b = 0; b < batch; ++b) {
      out.target_prob[b] += element(target[s], b);
      for (std::int64_t j = 0; j < width; ++j)
        out.grad.data<double>()[b * classes + starts[s] + j] = element(logits[s], b * width + j);
    }
  }
  return out;
}

// Mean over rows of -log softmax(s * cos)[label]: the loss with no margin, written plainly.
double cross_entropy(const Tensor& cos, const std::vector<std::int64_t>& labels, double s) {
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  double loss = 0.0;
  for (std::int64_t b = 0; b < batch; ++b) {
    double mx = -1e300;
    for (std::int64_t j = 0; j < classes; ++j) mx = std::max(mx, s * element(cos, b * classes + j));
    double sum = 0.0;
    for (std::int64_t j = 0; j < classes; ++j)
      sum += std::exp(s * element(cos, b * classes + j) - mx);
    loss += mx + std::log(sum) - s * element(cos, b * classes + labels[b]);
  }
  return loss / batch;
}

TEST(CpuMarginSoftmax, ShardedGradientIsCrossEntropyGradientWithoutMargin) {
  const std::int64_t batch = 4, classes = 7, split = 3;
  const std::vector<std::int64_t> labels = {1, 5, 6, 0};
  const MarginParams no_margin{1.0, 0.0, 0.0, 64.0};
  const Tensor cos = random_uniform({batch, classes}, DType::f64, 4, -0.9, 0.9);

  const ShardedSoftmax got = sharded_softmax(cos, labels, split, no_margin);
  double loss = 0.0;
  for (double p : got.target_prob) loss -= std::log(p);
  EXPECT_NEAR(loss / batch, cross_entropy(cos, labels, no_margin.scale), 1e-10);

  test::check_gradients(
      {{"cos", cos}},
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{f64_tensor({1}, {cross_entropy(in[0], labels, 64.0)})};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor grad = sharded_softmax(in[0], labels, split, no_margin).grad;
        CpuBackend().scale(grad, element(dout[0], 0));
        return std::vector<Tensor>{grad};
      },
      {.step = 1e-6, .rtol = 1e-5, .atol = 1e-7});
}

TEST(CpuMarginSoftmax, ArcFaceGradientIsStraightThrough) {
  // With the margin on, the gradient w.r.t. cos is scale * (p - onehot) / batch where p is
  // the softmax of the margin logits: no factor d cos(theta + m) / d cos(theta).
  const std::int64_t batch = 3, classes = 5;
  const std::vector<std::int64_t> labels = {4, 0, 2};
  const MarginParams arc{1.0, 0.5, 0.0, 64.0};
  const Tensor cos = random_uniform({batch, classes}, DType::f64, 5, -0.8, 0.8);
  const ShardedSoftmax got = sharded_softmax(cos, labels, 2, arc);
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<double> z(classes);
    for (std::int64_t j = 0; j < classes; ++j) {
      const double c = element(cos, b * classes + j);
      z[j] = 64.0 * (j == labels[b] ? std::cos(std::acos(c) + 0.5) : c);
    }
    const double mx = *std::max_element(z.begin(), z.end());
    double sum = 0.0;
    for (double v : z) sum += std::exp(v - mx);
    for (std::int64_t j = 0; j < classes; ++j) {
      const double p = std::exp(z[j] - mx) / sum;
      const double want = 64.0 * (p - (j == labels[b] ? 1.0 : 0.0)) / batch;
      EXPECT_NEAR(element(got.grad, b * classes + j), want, 1e-12) << b << "," << j;
      if (j == labels[b]) {
        EXPECT_NEAR(got.target_prob[b], p, 1e-14);
      }
    }
  }
}

TEST(CpuMarginSoftmax, ExpAndRowSumInF32) {
  CpuBackend backend;
  // Exponents stay within f32's normal range (below about -87 they turn subnormal).
  Tensor logits = random_uniform({3, 1000}, DType::f32, 6, -10.0, 64.0);
  Tensor before = Tensor::host({3, 1000}, DType::f32);
  backend.copy(logits, before);
  Tensor mx = Tensor::host({3}, DType::f32), sum = Tensor::host({3}, DType::f32);
  backend.fill(mx, 64.0);
  backend.exp_and_row_sum(logits, mx, sum);
  for (std::int64_t b = 0; b < 3; ++b) {
    double want = 0.0;
    for (std::int64_t j = 0; j < 1000; ++j) {
      const double e = std::exp(element(before, b * 1000 + j) - 64.0);
      // The f32 difference x - max, up to 74 in size, carries a relative error of 2^-24.
      EXPECT_NEAR(element(logits, b * 1000 + j), e, 1e-5 * e);
      want += e;
    }
    EXPECT_NEAR(element(sum, b), want, 1e-5 * want);
  }
}

TEST(CpuMarginSoftmax, LabelOutsideShardIsRejected) {
  CpuBackend backend;
  Tensor cos = random_uniform({2, 3}, DType::f32, 7);
  Tensor row_max = Tensor::host({2}, DType::f32);
  EXPECT_THROW(backend.margin_logits(cos, index_tensor({0, 3}), MarginParams{}, row_max), Error);
  EXPECT_THROW(backend.margin_logits(cos, index_tensor({-2, 0}), MarginParams{}, row_max), Error);
}

}  // namespace
}  // namespace pfc
