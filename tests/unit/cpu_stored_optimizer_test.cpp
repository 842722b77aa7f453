// The optimisers on stored 16-bit class centres (classifier_storage = "f16" | "bf16"): SGD and
// AdamW, dense, by rows and with a sparse gradient, against their definition written out here
// (read the stored values into f32, PyTorch's arithmetic, round each result stochastically
// with the bits of its global element), bit for bit; untouched rows stay as they are; and the reason for stochastic
// rounding, measured: a weight-decay-only trajectory of N(0, 0.01) centres, whose per-step
// change is below half a 16-bit spacing, stands still under round-to-nearest but follows f32
// on average under stochastic rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/bfloat16.h"
#include "core/float16_bits.h"
#include "core/half.h"
#include "core/stochastic_rounding.h"
#include "pfc/class_centre_init.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::random_uniform;

constexpr double kLr = 0.2, kMomentum = 0.9, kDecay = 5e-4;

std::uint16_t round_stored(DType t, float v, std::uint32_t bits) {
  return t == DType::f16 ? f16_bits_stochastic(v, bits) : bf16_bits_stochastic(v, bits);
}

float stored_value(DType t, std::uint16_t bits) {
  return t == DType::f16 ? Half::to_float(bits) : bf16_bits_to_float(bits);
}

std::vector<std::uint16_t> stored_bits(const Tensor& t) {
  const auto* p = static_cast<const std::uint16_t*>(t.raw());
  return std::vector<std::uint16_t>(p, p + t.numel());
}

// A host tensor of stored values rounded to nearest from uniform ones in [lo, scale).
Tensor stored_uniform(const Shape& shape, DType t, std::uint64_t seed, double scale,
                      double lo = -1) {
  const Tensor f = random_uniform(shape, DType::f32, seed, lo < 0 ? -scale : lo, scale);
  Tensor out = Tensor::host(shape, t);
  auto* p = static_cast<std::uint16_t*>(out.raw());
  for (std::int64_t i = 0; i < f.numel(); ++i)
    p[i] = t == DType::f16 ? Half::from_float(f.data<float>()[i])
                           : bf16_bits_nearest(f.data<float>()[i]);
  return out;
}

Tensor index_of(const std::vector<std::int64_t>& rows) {
  Tensor index = Tensor::host({static_cast<std::int64_t>(rows.size())}, DType::i64);
  std::copy(rows.begin(), rows.end(), index.data<std::int64_t>());
  return index;
}

TEST(CpuStoredOptimizer, SgdRowsMatchTheDefinitionBitForBit) {
  CpuBackend backend;
  const std::int64_t rows = 9, d = 6, first_row = 40;
  const std::vector<std::int64_t> sampled = {7, 0, 3};
  for (DType t : {DType::f16, DType::bf16}) {
    Tensor w = stored_uniform({rows, d}, t, 1, 0.05);
    Tensor m = stored_uniform({rows, d}, t, 2, 0.01);
    std::vector<std::uint16_t> rw = stored_bits(w), rm = stored_bits(m);
    for (std::int64_t step = 0; step < 3; ++step) {
      const Tensor g = random_uniform({3, d}, DType::f32, 10 + step, -1e-3, 1e-3);
      const StochasticRounding rounding{static_cast<std::uint64_t>(100 + step), first_row};
      backend.sgd_update_rows(w, m, index_of(sampled), g, kLr, kMomentum, kDecay, rounding);
      const std::uint64_t ws = rounding_stream(rounding.key, RoundedTensor::weight);
      const std::uint64_t ms = rounding_stream(rounding.key, RoundedTensor::first_moment);
      for (std::size_t i = 0; i < sampled.size(); ++i)
        for (std::int64_t j = 0; j < d; ++j) {
          const std::int64_t k = sampled[i] * d + j;
          const auto global = static_cast<std::uint64_t>((first_row + sampled[i]) * d + j);
          const float wf = stored_value(t, rw[k]), mf = stored_value(t, rm[k]);
          const float gi = g.data<float>()[i * d + j] + static_cast<float>(kDecay) * wf;
          const float mi = static_cast<float>(kMomentum) * mf + gi;
          rm[k] = round_stored(t, mi, rounding_bits(ms, global));
          rw[k] = round_stored(t, wf - static_cast<float>(kLr) * mi, rounding_bits(ws, global));
        }
    }
    EXPECT_EQ(stored_bits(w), rw) << dtype_name(t);
    EXPECT_EQ(stored_bits(m), rm) << dtype_name(t);
  }
}

TEST(CpuStoredOptimizer, DenseSgdRoundsEachElementByItsGlobalIndex) {
  // The dense update of a shard starting at global row 5 equals the row update of all its
  // rows: the same element draws the same bits, whichever way it is updated.
  CpuBackend backend;
  const std::int64_t rows = 4, d = 3;
  Tensor w1 = stored_uniform({rows, d}, DType::f16, 3, 0.05);
  Tensor m1 = stored_uniform({rows, d}, DType::f16, 4, 0.01);
  Tensor w2 = stored_uniform({rows, d}, DType::f16, 3, 0.05);
  Tensor m2 = stored_uniform({rows, d}, DType::f16, 4, 0.01);
  const Tensor g = random_uniform({rows, d}, DType::f32, 5, -1e-3, 1e-3);
  backend.sgd_update(w1, g, m1, kLr, kMomentum, kDecay, {77, 5});
  backend.sgd_update_rows(w2, m2, index_of({0, 1, 2, 3}), g, kLr, kMomentum, kDecay, {77, 5});
  EXPECT_EQ(stored_bits(w1), stored_bits(w2));
  EXPECT_EQ(stored_bits(m1), stored_bits(m2));
}

TEST(CpuStoredOptimizer, SparseGradientUpdatesAreTheDenseUpdateOfTheZeroFilledGradient) {
  // PartialFC_V2's dense update of stored centres: every row decays and every moment moves,
  // each element rounded with its global index's bits, bit for bit the dense update given the
  // gradient rows at their places and zeros elsewhere.
  CpuBackend backend;
  const std::int64_t rows = 7, d = 5;
  const std::vector<std::int64_t> sampled = {1, 4, 6};
  const Tensor g = random_uniform({3, d}, DType::f32, 30, -1e-3, 1e-3);
  Tensor dense_g = Tensor::host({rows, d}, DType::f32);
  backend.fill(dense_g, 0.0);
  for (std::size_t i = 0; i < sampled.size(); ++i)
    for (std::int64_t j = 0; j < d; ++j)
      dense_g.data<float>()[sampled[i] * d + j] =
          g.data<float>()[static_cast<std::int64_t>(i) * d + j];
  const StochasticRounding rounding{91, 12};
  for (DType t : {DType::f16, DType::bf16}) {
    Tensor w1 = stored_uniform({rows, d}, t, 31, 0.05), m1 = stored_uniform({rows, d}, t, 32, 0.01);
    Tensor w2 = stored_uniform({rows, d}, t, 31, 0.05), m2 = stored_uniform({rows, d}, t, 32, 0.01);
    backend.sgd_update_sparse_grad(w1, m1, index_of(sampled), g, kLr, kMomentum, kDecay, rounding);
    backend.sgd_update(w2, dense_g, m2, kLr, kMomentum, kDecay, rounding);
    EXPECT_EQ(stored_bits(w1), stored_bits(w2)) << dtype_name(t);
    EXPECT_EQ(stored_bits(m1), stored_bits(m2)) << dtype_name(t);
  }
  AdamWParams p;
  p.lr = 1e-3;
  p.weight_decay = 0.1;
  Tensor w1 = stored_uniform({rows, d}, DType::f16, 33, 0.05);
  Tensor m1 = stored_uniform({rows, d}, DType::bf16, 34, 1e-4);
  Tensor v1 = stored_uniform({rows, d}, DType::bf16, 35, 1e-8, 0.0);
  Tensor w2 = stored_uniform({rows, d}, DType::f16, 33, 0.05);
  Tensor m2 = stored_uniform({rows, d}, DType::bf16, 34, 1e-4);
  Tensor v2 = stored_uniform({rows, d}, DType::bf16, 35, 1e-8, 0.0);
  backend.adamw_update_sparse_grad(w1, m1, v1, index_of(sampled), g, p, rounding);
  backend.adamw_update(w2, dense_g, m2, v2, p, rounding);
  EXPECT_EQ(stored_bits(w1), stored_bits(w2));
  EXPECT_EQ(stored_bits(m1), stored_bits(m2));
  EXPECT_EQ(stored_bits(v1), stored_bits(v2));
}

TEST(CpuStoredOptimizer, AdamWRowsWithBf16MomentsMatchTheDefinitionBitForBit) {
  CpuBackend backend;
  const std::int64_t rows = 5, d = 4, first_row = 2;
  const std::vector<std::int64_t> sampled = {1, 4};
  AdamWParams p;
  p.lr = 1e-3;
  p.weight_decay = 0.1;
  Tensor w = stored_uniform({rows, d}, DType::f16, 6, 0.05);
  Tensor m = stored_uniform({rows, d}, DType::bf16, 7, 1e-4);
  Tensor v = stored_uniform({rows, d}, DType::bf16, 8, 1e-8, 0.0);
  std::vector<std::uint16_t> rw = stored_bits(w), rm = stored_bits(m), rv = stored_bits(v);
  for (std::int64_t step = 1; step <= 2; ++step) {
    p.step = step;
    const AdamWFactors f = adamw_factors(p, "test");
    const Tensor g = random_uniform({2, d}, DType::f32, 20 + step, -1e-5, 1e-5);
    const StochasticRounding rounding{static_cast<std::uint64_t>(step), first_row};
    backend.adamw_update_rows(w, m, v, index_of(sampled), g, p, rounding);
    const std::uint64_t ws = rounding_stream(rounding.key, RoundedTensor::weight);
    const std::uint64_t ms = rounding_stream(rounding.key, RoundedTensor::first_moment);
    const std::uint64_t vs = rounding_stream(rounding.key, RoundedTensor::second_moment);
    for (std::size_t i = 0; i < sampled.size(); ++i)
      for (std::int64_t j = 0; j < d; ++j) {
        const std::int64_t k = sampled[i] * d + j;
        const auto global = static_cast<std::uint64_t>((first_row + sampled[i]) * d + j);
        const float gi = g.data<float>()[i * d + j];
        const float wi = Half::to_float(rw[k]) * static_cast<float>(f.decay);
        const float mi = static_cast<float>(p.beta1) * bf16_bits_to_float(rm[k]) +
                         static_cast<float>(1.0 - p.beta1) * gi;
        const float vi = static_cast<float>(p.beta2) * bf16_bits_to_float(rv[k]) +
                         static_cast<float>(1.0 - p.beta2) * gi * gi;
        rm[k] = bf16_bits_stochastic(mi, rounding_bits(ms, global));
        rv[k] = bf16_bits_stochastic(vi, rounding_bits(vs, global));
        rw[k] = f16_bits_stochastic(
            wi - static_cast<float>(f.step_size) * mi /
                     (std::sqrt(vi) / static_cast<float>(f.bias2_sqrt) + static_cast<float>(p.eps)),
            rounding_bits(ws, global));
      }
  }
  EXPECT_EQ(stored_bits(w), rw);
  EXPECT_EQ(stored_bits(m), rm);
  EXPECT_EQ(stored_bits(v), rv);
}

// Mean |w| after `steps` weight-decay-only SGD steps (g = 0, momentum 0.9) from N(0, 0.01)
// centres, relative to the start: f32, and each 16-bit type rounded to nearest (emulated here)
// or stochastically (the backend).
struct Shrink {
  double f32 = 0, nearest = 0, stochastic = 0;
};

Shrink weight_decay_shrink(DType t, double lr, int steps) {
  constexpr std::int64_t kRows = 64, kDim = 128;
  CpuBackend backend;
  std::vector<float> w32(kRows * kDim), m32(kRows * kDim, 0.0f);
  for (std::size_t i = 0; i < w32.size(); ++i) w32[i] = class_centre_init_value(2048, i);
  std::vector<float> wn(w32.size()), mn(w32.size(), 0.0f);
  Tensor w = Tensor::host({kRows, kDim}, t), m = Tensor::host({kRows, kDim}, t);
  backend.fill(m, 0.0);
  auto* pw = static_cast<std::uint16_t*>(w.raw());
  double start = 0;
  for (std::size_t i = 0; i < w32.size(); ++i) {
    pw[i] = t == DType::f16 ? Half::from_float(w32[i]) : bf16_bits_nearest(w32[i]);
    wn[i] = stored_value(t, pw[i]);
    start += std::fabs(w32[i]);
  }
  Tensor g = Tensor::host({kRows, kDim}, DType::f32);
  backend.fill(g, 0.0);
  const auto nearest = [&](float v) {
    return stored_value(t, t == DType::f16 ? Half::from_float(v) : bf16_bits_nearest(v));
  };
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < w32.size(); ++i) {
      m32[i] = static_cast<float>(kMomentum) * m32[i] + static_cast<float>(kDecay) * w32[i];
      w32[i] -= static_cast<float>(lr) * m32[i];
      mn[i] = nearest(static_cast<float>(kMomentum) * mn[i] + static_cast<float>(kDecay) * wn[i]);
      wn[i] = nearest(wn[i] - static_cast<float>(lr) * mn[i]);
    }
    backend.sgd_update(w, g, m, lr, kMomentum, kDecay, {static_cast<std::uint64_t>(s), 0});
  }
  Shrink out;
  for (std::size_t i = 0; i < w32.size(); ++i) {
    out.f32 += std::fabs(w32[i]);
    out.nearest += std::fabs(wn[i]);
    out.stochastic += std::fabs(element(w, static_cast<std::int64_t>(i)));
  }
  out.f32 = 1 - out.f32 / start;
  out.nearest = 1 - out.nearest / start;
  out.stochastic = 1 - out.stochastic / start;
  return out;
}

TEST(CpuStoredOptimizer, StochasticRoundingKeepsUpdatesThatRoundToNearestLoses) {
  // lr 0.2 is the seed's rate at a global batch of 1024; 0.002 is it after two of its decays.
  // Each step shrinks a centre by about lr * wd / (1 - momentum) = 1e-3 (1e-5) of itself:
  // below half of bf16's spacing (2^-9 relative) at both rates, and of f16's (2^-12) at the
  // lower one.
  std::printf("weight decay alone, 200 steps: shrink of mean |w| (f32 / nearest / stochastic)\n");
  for (double lr : {0.2, 0.002}) {
    for (DType t : {DType::f16, DType::bf16}) {
      const Shrink s = weight_decay_shrink(t, lr, 200);
      std::printf("  lr %-6g %-5s %.6f / %.6f / %.6f\n", lr, std::string(dtype_name(t)).c_str(),
                  s.f32, s.nearest, s.stochastic);
      EXPECT_NEAR(s.stochastic, s.f32, 0.02 * s.f32 + 2e-5) << dtype_name(t) << " lr " << lr;
      if (t == DType::bf16 || lr < 0.01)
        EXPECT_LT(s.nearest, 0.2 * s.f32) << "round-to-nearest keeps the update: " << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace pfc
