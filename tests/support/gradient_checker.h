// The finite-difference gradient checker shared by every layer test (Caffe's habit): a
// primitive's analytic backward is compared, element by element and in f64, with central
// differences of a random projection of its forward. Also the random inputs and the
// tolerance rule the tests share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace pfc::test {

// One input of the function under test. Checked inputs must be f64 host tensors; others
// (labels, indices) are passed through unchanged.
struct GradInput {
  std::string name;
  Tensor value;
  bool check = true;
};

// outputs = forward(inputs); every output an f64 host tensor. Must not modify the inputs.
using ForwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;
// input gradients = backward(inputs, output gradients), one per input in the same order
// (an undefined Tensor for inputs that are not checked).
using BackwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                     const std::vector<Tensor>& output_grads)>;

struct GradientCheckOptions {
  double step = 1e-6;
  // An element passes when |analytic - numeric| <= atol + rtol * max(|analytic|, |numeric|).
  double rtol = 1e-6;
  double atol = 1e-8;
  std::uint64_t seed = 1;  // of the random output weighting R
};

// With loss = sum over outputs of sum(R * output), R uniform in [-1, 1], checks every
// element of every checked input; a gtest failure names the worst element of each input
// (its index, both values) and how many elements failed.
void check_gradients(const std::vector<GradInput>& inputs, const ForwardFn& forward,
                     const BackwardFn& backward, const GradientCheckOptions& options = {});

// A host tensor (f32 or f64) of values uniform in [lo, hi), reproducible from seed.
Tensor random_uniform(const Shape& shape, DType dtype, std::uint64_t seed, double lo = -1.0,
                      double hi = 1.0);

// Element-wise comparison of two f32/f64 host tensors of the same shape (dtypes may differ)
// with the checker's rule; a failure names the worst element and the count of failures.
void expect_tensors_near(const Tensor& actual, const Tensor& expected, double rtol, double atol,
                         const std::string& what);

// A host i64 vector of these values (indices, labels).
Tensor index_tensor(const std::vector<std::int64_t>& values);

// Element i of an f16, bf16, f32 or f64 host tensor as double.
double element(const Tensor& t, std::int64_t i);

// An f64 host copy of a host tensor of any float type (the reference loops' operands).
Tensor to_f64(const Tensor& t);

// ||ours - reference|| / ||reference|| (L2, in double) of two host tensors of any float types
// and the same element count: how the golden files state arcface_torch's own error.
double relative_l2(const Tensor& ours, const Tensor& reference);

}  // namespace pfc::test
