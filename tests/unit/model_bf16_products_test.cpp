// The CPU backend's fp16 mode: a network whose convolutions and token Linears multiply bf16
// operands (NetworkPrecision{f32, bf16}) holds bf16 working copies of those weights, keeps f32
// masters and gradients, and trains within bf16's rounding of the same network in f32: one
// training forward and backward of a small iresnet, MobileFaceNet and Vision Transformer from
// the same initial values, embeddings and gradients against f32's. The kernels themselves are
// held to the exact products of their bf16 operands (cpu_onednn_conv2d_test, cpu_gemm_test);
// here a weight read stale or from the wrong copy would move the results by their own size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "model/make_backbone.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;

// How far bf16 moves a network from f32 depends on its conditioning at initialisation:
// MobileFaceNet's f32 results move 4x as much as iresnet's between two f32 summation orders
// (oneDNN against the reference), and its bf16 ones move 4x as much too.
struct Case {
  const char* network;
  double embedding_tolerance, gradient_tolerance;
};

Config config_of(const std::string& name) {
  Config cfg;
  cfg.network = name;
  cfg.embedding_size = 16;
  if (name == "custom") {
    cfg.layers = {1, 2, 1, 1};
    cfg.widths = {16, 16, 32, 32};
    cfg.image_size = 32;
  } else if (name == "vit") {
    cfg.embed_dim = 32;
    cfg.depth = 2;
    cfg.num_heads = 4;
    cfg.mask_ratio = 0.0;
    cfg.drop_path_rate = 0.0;
  }
  return cfg;
}

struct Pass {
  Tensor embeddings;
  std::vector<std::string> trained;  // the trainable parameters' names
  std::vector<Tensor> grads;         // host copies of their gradients, in that order
};

// One training forward and backward from the same initial values, images and gradient.
Pass train_pass(CpuBackend& backend, const Config& cfg, const NetworkPrecision& precision) {
  const auto model = make_backbone(cfg, backend, precision);
  model->initialize(7);
  model->refresh_working_copies();
  const Tensor images =
      random_uniform({16, cfg.image_size, cfg.image_size, 3}, DType::f32, 8, -1.0, 1.0);
  Pass pass;
  pass.embeddings = backend.to_host(model->forward(images, ForwardMode::training));
  model->backward(random_uniform(pass.embeddings.shape(), DType::f32, 9));
  for (const Parameter* p : model->parameters()) {
    EXPECT_EQ(p->grad.dtype(), DType::f32) << p->name;
    if (p->working.defined()) EXPECT_EQ(p->working.dtype(), precision.products) << p->name;
    if (!p->trainable) continue;
    pass.trained.push_back(p->name);
    pass.grads.push_back(backend.to_host(p->grad));
  }
  return pass;
}

double l2(const Tensor& t) {
  double sum = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) sum += test::element(t, i) * test::element(t, i);
  return std::sqrt(sum);
}

class Bf16Products : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16Products, TrainWithinBf16RoundingOfF32) {
  const Case c = GetParam();
  CpuBackend backend;
  const Config cfg = config_of(c.network);
  const Pass f32 = train_pass(backend, cfg, DType::f32);
  const Pass bf16 = train_pass(backend, cfg, {DType::f32, DType::bf16});
  const double moved = test::relative_l2(bf16.embeddings, f32.embeddings);
  EXPECT_LT(moved, c.embedding_tolerance);
  EXPECT_GT(moved, 0.0) << "the products were not rounded to bf16";
  ASSERT_EQ(f32.trained, bf16.trained);
  // Gradients that vanish but for rounding (a batch-norm's shift before another batch-norm)
  // have no relative error to speak of.
  double largest = 0;
  for (const Tensor& g : f32.grads) largest = std::max(largest, l2(g));
  for (std::size_t i = 0; i < f32.grads.size(); ++i) {
    if (l2(f32.grads[i]) < 1e-3 * largest) continue;
    EXPECT_LT(test::relative_l2(bf16.grads[i], f32.grads[i]), c.gradient_tolerance)
        << f32.trained[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, Bf16Products,
                         ::testing::Values(Case{"custom", 2e-2, 0.2}, Case{"mbf", 8e-2, 0.6},
                                           Case{"vit", 1e-2, 0.2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.network);
                         });

}  // namespace
}  // namespace pfc
