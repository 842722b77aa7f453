// The optimiser interface: each kind names its moments as torch.optim does, starts them at
// zero, runs the backend's update with its settings (weight decay off when asked), counts
// updates for AdamW's bias correction (dense and row updates alike), moves the class centres'
// sampled rows alone or the whole table by the classifier update, and refuses a state that
// does not fit the tensor; names parse, and an unknown one is a usage error.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "optim/optimizer.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::element;
using test::expect_tensors_near;
using test::random_uniform;

Tensor copy_of(CpuBackend& backend, const Tensor& t) { return backend.to_host(t); }

TEST(Optimizer, NamesAndZeroMoments) {
  CpuBackend backend;
  OptimizerSettings s;
  EXPECT_EQ(make_optimizer(s)->moment_names(), std::vector<std::string>{"momentum"});
  s.kind = OptimizerKind::adamw;
  const auto adamw = make_optimizer(s);
  EXPECT_EQ(adamw->moment_names(), (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  const OptimizerState state = adamw->zero_state(backend, {3, 2}, DType::f64);
  ASSERT_EQ(state.moments.size(), 2u);
  EXPECT_EQ(state.updates, 0);
  for (const Tensor& m : state.moments) {
    EXPECT_EQ(m.shape(), (Shape{3, 2}));
    EXPECT_EQ(m.dtype(), DType::f64);
    for (std::int64_t i = 0; i < m.numel(); ++i) EXPECT_EQ(m.data<double>()[i], 0.0);
  }
  EXPECT_EQ(parse_optimizer_kind("adamw"), OptimizerKind::adamw);
  EXPECT_EQ(optimizer_name(parse_optimizer_kind("sgd")), "sgd");
  EXPECT_THROW(parse_optimizer_kind("adam"), UsageError);
}

TEST(Optimizer, SgdIsTheBackendUpdateWithItsSettings) {
  CpuBackend backend;
  OptimizerSettings s;
  s.momentum = 0.8;
  s.weight_decay = 0.01;
  const auto sgd = make_optimizer(s);
  const Tensor w0 = random_uniform({4, 3}, DType::f32, 1);
  const Tensor g = random_uniform({4, 3}, DType::f32, 2);
  for (const bool decay : {true, false}) {
    Tensor w = copy_of(backend, w0);
    OptimizerState state = sgd->zero_state(backend, w.shape(), w.dtype());
    sgd->update(backend, w, g, state, 0.5, decay);
    sgd->update(backend, w, g, state, 0.5, decay);
    Tensor rw = copy_of(backend, w0), rm = Tensor::host({4, 3}, DType::f32);
    backend.fill(rm, 0.0);
    for (int i = 0; i < 2; ++i) backend.sgd_update(rw, g, rm, 0.5, 0.8, decay ? 0.01 : 0.0);
    expect_tensors_near(w, rw, 0.0, 0.0, decay ? "sgd w" : "sgd w without decay");
    expect_tensors_near(state.moments[0], rm, 0.0, 0.0, "sgd momentum");
    EXPECT_EQ(state.updates, 2);
  }
}

TEST(Optimizer, AdamWCountsUpdatesForTheBiasCorrection) {
  CpuBackend backend;
  OptimizerSettings s;
  s.kind = OptimizerKind::adamw;
  s.weight_decay = 0.1;
  const auto adamw = make_optimizer(s);
  const Tensor w0 = random_uniform({5, 2}, DType::f64, 3);
  Tensor w = copy_of(backend, w0), rw = copy_of(backend, w0);
  OptimizerState state = adamw->zero_state(backend, w.shape(), w.dtype());
  Tensor rm = copy_of(backend, state.moments[0]), rv = copy_of(backend, state.moments[1]);
  Tensor index = Tensor::host({2}, DType::i64);
  index.data<std::int64_t>()[0] = 1;
  index.data<std::int64_t>()[1] = 4;
  for (std::int64_t t = 1; t <= 3; ++t) {
    const Tensor g = random_uniform({5, 2}, DType::f64, 10 + static_cast<std::uint64_t>(t));
    const Tensor gr = random_uniform({2, 2}, DType::f64, 20 + static_cast<std::uint64_t>(t));
    AdamWParams p{0.01, 0.9, 0.999, 1e-8, 0.1, t};
    if (t == 2) {  // a row update in between counts as one update of the table
      adamw->update_rows(backend, w, index, gr, state, 0.01, ClassifierUpdate::sampled);
      backend.adamw_update_rows(rw, rm, rv, index, gr, p);
    } else {
      adamw->update(backend, w, g, state, 0.01, true);
      backend.adamw_update(rw, g, rm, rv, p);
    }
    EXPECT_EQ(state.updates, t);
  }
  expect_tensors_near(w, rw, 0.0, 0.0, "adamw w");
  expect_tensors_near(state.moments[0], rm, 0.0, 0.0, "adamw exp_avg");
  expect_tensors_near(state.moments[1], rv, 0.0, 0.0, "adamw exp_avg_sq");
}

// The classifier's two updates are the backend's row and sparse-gradient primitives, each with
// the optimiser's constants; either counts as one update of the table.
TEST(Optimizer, ClassifierUpdateChoosesSampledRowsOrTheWholeTable) {
  CpuBackend backend;
  Tensor index = Tensor::host({2}, DType::i64);
  index.data<std::int64_t>()[0] = 0;
  index.data<std::int64_t>()[1] = 3;
  const Tensor gr = random_uniform({2, 3}, DType::f64, 31);
  for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adamw}) {
    OptimizerSettings s;
    s.kind = kind;
    const auto optimizer = make_optimizer(s);
    for (ClassifierUpdate rows : {ClassifierUpdate::sampled, ClassifierUpdate::dense}) {
      const Tensor w0 = random_uniform({5, 3}, DType::f64, 30);
      Tensor w = copy_of(backend, w0), rw = copy_of(backend, w0);
      OptimizerState state = optimizer->zero_state(backend, w.shape(), w.dtype());
      Tensor rm = copy_of(backend, state.moments[0]);
      Tensor rv = kind == OptimizerKind::adamw ? copy_of(backend, state.moments[1]) : Tensor();
      optimizer->update_rows(backend, w, index, gr, state, 0.1, rows);
      const bool dense = rows == ClassifierUpdate::dense;
      if (kind == OptimizerKind::sgd) {
        if (dense) backend.sgd_update_sparse_grad(rw, rm, index, gr, 0.1, s.momentum, s.weight_decay);
        else backend.sgd_update_rows(rw, rm, index, gr, 0.1, s.momentum, s.weight_decay);
      } else {
        const AdamWParams p{0.1, s.beta1, s.beta2, s.eps, s.weight_decay, 1};
        if (dense) backend.adamw_update_sparse_grad(rw, rm, rv, index, gr, p);
        else backend.adamw_update_rows(rw, rm, rv, index, gr, p);
      }
      const std::string what = fmt::format("{} {}", optimizer_name(kind),
                                           classifier_update_name(rows));
      expect_tensors_near(w, rw, 0.0, 0.0, what);
      EXPECT_EQ(state.updates, 1) << what;
      // The unsampled row 1 moves under the dense update only.
      EXPECT_EQ(element(w, 3) == element(w0, 3), !dense) << what;
    }
  }
  EXPECT_EQ(parse_classifier_update("dense"), ClassifierUpdate::dense);
  EXPECT_THROW(parse_classifier_update("lazy"), UsageError);
}

TEST(Optimizer, RefusesAStateThatDoesNotFit) {
  CpuBackend backend;
  OptimizerSettings s;
  s.kind = OptimizerKind::adamw;
  const auto adamw = make_optimizer(s);
  Tensor w = random_uniform({4}, DType::f32, 5);
  const Tensor g = random_uniform({4}, DType::f32, 6);
  OptimizerState sgd_state = make_optimizer({})->zero_state(backend, {4}, DType::f32);
  EXPECT_THROW(adamw->update(backend, w, g, sgd_state, 0.1, true), Error);
  OptimizerState wrong_shape = adamw->zero_state(backend, {5}, DType::f32);
  EXPECT_THROW(adamw->update(backend, w, g, wrong_shape, 0.1, true), Error);
  EXPECT_EQ(wrong_shape.updates, 0);
}

}  // namespace
}  // namespace pfc
