// CpuBackend's exact margin gradient (the seed's losses.py differentiates its acos and cos):
// margin_gradient_factor against finite differences of the margin itself, at the edges too
// (theta + m beyond pi, c = +-1, clamped cosines), and the whole margin softmax with the
// factor applied by scale_target_column against finite differences of the ArcFace loss.
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

Tensor f64_column(const std::vector<double>& values) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size()), 1}, DType::f64);
  std::copy(values.begin(), values.end(), t.data<double>());
  return t;
}

// The factor of each one-column row, its target in column 0.
std::vector<double> factors(const MarginParams& m, const std::vector<double>& cos) {
  CpuBackend backend;
  const Tensor c = f64_column(cos);
  Tensor factor = Tensor::host({c.dim(0)}, DType::f64);
  backend.margin_gradient_factor(c, index_tensor(std::vector<std::int64_t>(cos.size(), 0)), m,
                                 factor);
  std::vector<double> out(cos.size());
  for (std::size_t i = 0; i < cos.size(); ++i) out[i] = element(factor, i);
  return out;
}

double margin(const MarginParams& m, double c) { return std::cos(m.m1 * std::acos(c) + m.m2) - m.m3; }

TEST(CpuMarginGradient, FactorIsTheDerivativeOfTheMargin) {
  // theta + 0.5 passes pi below c = cos(pi - 0.5) = -0.8776: the seed has no threshold there,
  // so the factor turns negative.
  const std::vector<double> cos = {-0.97, -0.9, -0.5, 0.0, 0.3, 0.7, 0.95, 0.999};
  for (const MarginParams& m : {MarginParams{1.0, 0.5, 0.0, 64.0}, MarginParams{1.0, 0.3, 0.2, 30.0},
                                MarginParams{1.2, 0.1, 0.0, 64.0}}) {
    const std::vector<double> got = factors(m, cos);
    for (std::size_t i = 0; i < cos.size(); ++i) {
      const double h = 1e-7;
      const double want = (margin(m, cos[i] + h) - margin(m, cos[i] - h)) / (2 * h);
      EXPECT_NEAR(got[i], want, 1e-6 * std::max(1.0, std::fabs(want)))
          << "m = (" << m.m1 << ", " << m.m2 << ", " << m.m3 << "), c = " << cos[i];
    }
  }
  EXPECT_LT(factors({1.0, 0.5, 0.0, 64.0}, {-0.97})[0], 0.0);
  // ArcFace at its closed form sin(theta + m) / sin(theta).
  const double theta = std::acos(0.3);
  EXPECT_NEAR(factors({1.0, 0.5, 0.0, 64.0}, {0.3})[0], std::sin(theta + 0.5) / std::sin(theta),
              1e-15);
}

TEST(CpuMarginGradient, CosFaceAndMissingTargetsTakeOne) {
  for (double f : factors({1.0, 0.0, 0.4, 64.0}, {-1.0, -0.3, 0.8, 1.0, 1.2})) EXPECT_EQ(f, 1.0);
  CpuBackend backend;
  const Tensor cos = random_uniform({2, 3}, DType::f32, 1, -0.9, 0.9);
  Tensor factor = Tensor::host({2}, DType::f32);
  backend.margin_gradient_factor(cos, index_tensor({-1, 2}), {1.0, 0.5, 0.0, 64.0}, factor);
  EXPECT_EQ(element(factor, 0), 1.0);
  const double c = element(cos, 5);
  EXPECT_NEAR(element(factor, 1), std::sin(std::acos(c) + 0.5) / std::sqrt(1 - c * c), 1e-6);
}

TEST(CpuMarginGradient, EdgesAreWhereTheSeedIsNotFinite) {
  // c = 1 (an embedding on its centre) and c = -1: sin(theta) = 0, the factor is infinite, as
  // the seed's acos gradient is; a cosine rounded beyond 1 is clamped to 1 first (the seed,
  // which does not clamp, gives NaN there).
  const std::vector<double> got = factors({1.0, 0.5, 0.0, 64.0}, {1.0, 1.0000001, -1.0});
  EXPECT_TRUE(std::isinf(got[0]) && got[0] > 0);
  EXPECT_TRUE(std::isinf(got[1]) && got[1] > 0);
  EXPECT_TRUE(std::isinf(got[2]) && got[2] < 0);
  // Just inside, the factor is large but finite: sin(0.5) / sin(theta).
  const double c = 1.0 - 1e-12;
  EXPECT_NEAR(factors({1.0, 0.5, 0.0, 64.0}, {c})[0],
              std::sin(std::acos(c) + 0.5) / std::sqrt((1 - c) * (1 + c)), 1e-3);
}

// Mean over rows of -log softmax(logits)[label] with the target's logit s * margin(c): the
// seed's ArcFace loss, written plainly.
double arcface_loss(const Tensor& cos, const std::vector<std::int64_t>& labels,
                    const MarginParams& m) {
  const std::int64_t batch = cos.dim(0), classes = cos.dim(1);
  double loss = 0.0;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<double> z(classes);
    for (std::int64_t j = 0; j < classes; ++j) {
      const double c = element(cos, b * classes + j);
      z[j] = m.scale * (j == labels[b] ? margin(m, c) : c);
    }
    const double mx = *std::max_element(z.begin(), z.end());
    double sum = 0.0;
    for (double v : z) sum += std::exp(v - mx);
    loss += mx + std::log(sum) - z[labels[b]];
  }
  return loss / batch;
}

// d loss / d cos through the backend: the factor, the margin softmax, then the factor on the
// target column.
Tensor exact_gradient(const Tensor& cos, const std::vector<std::int64_t>& labels,
                      const MarginParams& m) {
  CpuBackend backend;
  const std::int64_t batch = cos.dim(0);
  const Tensor label = index_tensor(labels);
  Tensor logits = Tensor::host(cos.shape(), DType::f64);
  backend.copy(cos, logits);
  Tensor factor = Tensor::host({batch}, DType::f64), row_max = Tensor::host({batch}, DType::f64);
  Tensor row_sum = Tensor::host({batch}, DType::f64), target = Tensor::host({batch}, DType::f64);
  backend.margin_gradient_factor(logits, label, m, factor);
  backend.margin_logits(logits, label, m, row_max);
  backend.exp_and_row_sum(logits, row_max, row_sum);
  backend.softmax_grad(logits, row_sum, label, m.scale, batch, target);
  backend.scale_target_column(logits, label, factor);
  return logits;
}

TEST(CpuMarginGradient, ExactGradientMatchesFiniteDifferencesOfTheArcFaceLoss) {
  const std::vector<std::int64_t> labels = {4, 0, 2};
  // Small s keeps the softmax away from saturation, so every element's gradient is sizeable.
  const MarginParams arc{1.0, 0.5, 0.0, 4.0};
  const Tensor cos = random_uniform({3, 5}, DType::f64, 5, -0.95, 0.95);
  test::check_gradients(
      {{"cos", cos}},
      [&](const std::vector<Tensor>& in) {
        Tensor loss = Tensor::host({1}, DType::f64);
        loss.data<double>()[0] = arcface_loss(in[0], labels, arc);
        return std::vector<Tensor>{loss};
      },
      [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
        Tensor grad = exact_gradient(in[0], labels, arc);
        CpuBackend().scale(grad, element(dout[0], 0));
        return std::vector<Tensor>{grad};
      },
      {.step = 1e-6, .rtol = 1e-5, .atol = 1e-8});
}

TEST(CpuMarginGradient, ScaleTargetColumnTouchesTheTargetsOnly) {
  CpuBackend backend;
  Tensor grad = random_uniform({3, 4}, DType::f32, 8);
  Tensor before = Tensor::host({3, 4}, DType::f32);
  backend.copy(grad, before);
  Tensor factor = Tensor::host({3}, DType::f32);
  for (std::int64_t b = 0; b < 3; ++b) factor.data<float>()[b] = static_cast<float>(2 + b);
  const std::vector<std::int64_t> labels = {3, -1, 0};
  backend.scale_target_column(grad, index_tensor(labels), factor);
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t j = 0; j < 4; ++j) {
      const double was = element(before, b * 4 + j);
      EXPECT_EQ(element(grad, b * 4 + j),
                j == labels[b] ? static_cast<float>(was) * static_cast<float>(2 + b) : was);
    }
}

TEST(CpuMarginGradient, ChecksLabelsAndOperands) {
  CpuBackend backend;
  Tensor cos = random_uniform({2, 3}, DType::f32, 7);
  Tensor factor = Tensor::host({2}, DType::f32);
  EXPECT_THROW(backend.margin_gradient_factor(cos, index_tensor({0, 3}), MarginParams{}, factor),
               Error);
  EXPECT_THROW(backend.scale_target_column(cos, index_tensor({-2, 0}), factor), Error);
  Tensor wrong = Tensor::host({3}, DType::f32);
  EXPECT_THROW(backend.margin_gradient_factor(cos, index_tensor({0, 1}), MarginParams{}, wrong),
               Error);
  Tensor f64_factor = Tensor::host({2}, DType::f64);
  EXPECT_THROW(backend.scale_target_column(cos, index_tensor({0, 1}), f64_factor), Error);
}

}  // namespace
}  // namespace pfc
