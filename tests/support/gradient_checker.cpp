#include "support/gradient_checker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/counter_rng.h"
#include "core/error.h"
#include "core/bfloat16.h"
#include "core/half.h"

namespace pfc::test {
namespace {

std::string index_string(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

// How far past the tolerance a pair is: > 1 fails; NaN or inf anywhere fails.
double excess(double a, double b, double rtol, double atol) {
  if (!std::isfinite(a) || !std::isfinite(b)) return std::numeric_limits<double>::infinity();
  return std::fabs(a - b) / (atol + rtol * std::max(std::fabs(a), std::fabs(b)));
}

// Tracks the worst element of one comparison and how many elements fail.
struct Worst {
  double worst_excess = -1.0;
  std::int64_t index = -1, failures = 0;
  double actual = 0.0, expected = 0.0;

  void add(std::int64_t i, double a, double e, double rtol, double atol) {
    const double x = excess(a, e, rtol, atol);
    if (x > 1.0) ++failures;
    if (x > worst_excess || index < 0) {
      worst_excess = x;
      index = i;
      actual = a;
      expected = e;
    }
  }
};

double weighted_sum(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  double loss = 0.0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const double* y = outputs[k].data<double>();
    const double* r = weights[k].data<double>();
    for (std::int64_t i = 0; i < outputs[k].numel(); ++i) loss += r[i] * y[i];
  }
  return loss;
}

}  // namespace

Tensor index_tensor(const std::vector<std::int64_t>& values) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size())}, DType::i64);
  std::copy(values.begin(), values.end(), t.data<std::int64_t>());
  return t;
}

double element(const Tensor& t, std::int64_t i) {
  if (t.dtype() == DType::f64) return t.data<double>()[i];
  if (t.dtype() == DType::f16) return t.data<Half>()[i].to_float();
  if (t.dtype() == DType::bf16) return t.data<BFloat16>()[i].to_float();
  return t.data<float>()[i];
}

Tensor to_f64(const Tensor& t) {
  Tensor wide = Tensor::host(t.shape(), DType::f64);
  for (std::int64_t i = 0; i < t.numel(); ++i) wide.data<double>()[i] = element(t, i);
  return wide;
}

double relative_l2(const Tensor& ours, const Tensor& reference) {
  PFC_CHECK(ours.numel() == reference.numel(), "relative_l2: {} vs {} elements", ours.numel(),
            reference.numel());
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < reference.numel(); ++i) {
    const double r = element(reference, i);
    const double d = element(ours, i) - r;
    diff += d * d;
    norm += r * r;
  }
  return std::sqrt(diff / norm);
}

Tensor random_uniform(const Shape& shape, DType dtype, std::uint64_t seed, double lo, double hi) {
  Tensor t = Tensor::host(shape, dtype);
  const std::uint64_t key = stream_key(seed, "test.random_uniform");
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double v = lo + (hi - lo) * uniform53(key, static_cast<std::uint64_t>(i));
    if (dtype == DType::f64) {
      t.data<double>()[i] = v;
    } else {
      t.data<float>()[i] = static_cast<float>(v);
    }
  }
  return t;
}

void expect_tensors_near(const Tensor& actual, const Tensor& expected, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what << ": shapes differ";
  Worst worst;
  for (std::int64_t i = 0; i < actual.numel(); ++i)
    worst.add(i, element(actual, i), element(expected, i), rtol, atol);
  if (worst.failures > 0)
    ADD_FAILURE() << fmt::format(
        "{}: {} of {} elements out of tolerance (rtol {}, atol {}); worst at {}: actual {:.10g}, "
        "expected {:.10g}",
        what, worst.failures, actual.numel(), rtol, atol, index_string(actual.shape(), worst.index),
        worst.actual, worst.expected);
}

void check_gradients(const std::vector<GradInput>& inputs, const ForwardFn& forward,
                     const BackwardFn& backward, const GradientCheckOptions& options) {
  std::vector<Tensor> values;
  for (const auto& in : inputs) {
    if (in.check) {
      ASSERT_EQ(in.value.dtype(), DType::f64) << "checked input " << in.name << " must be f64";
    }
    values.push_back(in.value);
  }

  const std::vector<Tensor> outputs = forward(values);
  std::vector<Tensor> weights;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    ASSERT_EQ(outputs[k].dtype(), DType::f64) << "output " << k << " must be f64";
    weights.push_back(random_uniform(outputs[k].shape(), DType::f64, options.seed * 1000 + k));
  }

  const std::vector<Tensor> analytic = backward(values, weights);
  ASSERT_EQ(analytic.size(), inputs.size()) << "backward must return one gradient per input";

  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].check) continue;
    const Tensor& grad = analytic[i];
    ASSERT_TRUE(grad.defined()) << "no gradient for checked input " << inputs[i].name;
    ASSERT_EQ(grad.shape(), values[i].shape()) << "gradient of " << inputs[i].name;
    double* x = values[i].data<double>();
    Worst worst;
    for (std::int64_t j = 0; j < values[i].numel(); ++j) {
      const double saved = x[j];
      x[j] = saved + options.step;
      const double plus = weighted_sum(forward(values), weights);
      x[j] = saved - options.step;
      const double minus = weighted_sum(forward(values), weights);
      x[j] = saved;
      const double numeric = (plus - minus) / (2.0 * options.step);
      worst.add(j, element(grad, j), numeric, options.rtol, options.atol);
    }
    if (worst.failures > 0)
      ADD_FAILURE() << fmt::format(
          "gradient of {}: {} of {} elements out of tolerance (rtol {}, atol {}, step {}); worst "
          "at {}: analytic {:.12g}, finite difference {:.12g}",
          inputs[i].name, worst.failures, values[i].numel(), options.rtol, options.atol,
          options.step, index_string(values[i].shape(), worst.index), worst.actual, worst.expected);
  }
}

}  // namespace pfc::test
