// Gradient clipping: the global norm over several tensors, and the scaling
// torch.nn.utils.clip_grad_norm_ applies (coef = max_norm / (norm + 1e-6), only when < 1).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "train/grad_clip.h"

namespace pfc {
namespace {

Tensor filled(const std::vector<float>& values) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size())}, DType::f32);
  for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

// Two gradients whose global norm is 13: sqrt(3^2 + 4^2 + 12^2).
std::vector<Tensor> gradients() { return {filled({3.0f, 4.0f}), filled({0.0f, -12.0f})}; }

TEST(GradClip, GlobalNormOverEveryTensor) {
  auto backend = make_backend(BackendKind::cpu);
  const std::vector<Tensor> grads = gradients();
  EXPECT_DOUBLE_EQ(global_l2_norm(*backend, grads), 13.0);
  EXPECT_DOUBLE_EQ(global_l2_norm(*backend, std::vector<Tensor>{}), 0.0);
}

TEST(GradClip, ScalesToTheMaximumNorm) {
  auto backend = make_backend(BackendKind::cpu);
  std::vector<Tensor> grads = gradients();
  EXPECT_DOUBLE_EQ(clip_grad_norm(*backend, grads, 5.0), 13.0);
  const double coef = 5.0 / (13.0 + 1e-6);
  EXPECT_FLOAT_EQ(grads[0].data<float>()[0], static_cast<float>(3.0 * coef));
  EXPECT_FLOAT_EQ(grads[0].data<float>()[1], static_cast<float>(4.0 * coef));
  EXPECT_FLOAT_EQ(grads[1].data<float>()[1], static_cast<float>(-12.0 * coef));
  EXPECT_NEAR(global_l2_norm(*backend, grads), 5.0, 1e-5);
}

TEST(GradClip, LeavesSmallGradientsAlone) {
  auto backend = make_backend(BackendKind::cpu);
  std::vector<Tensor> grads = gradients();
  EXPECT_DOUBLE_EQ(clip_grad_norm(*backend, grads, 100.0), 13.0);
  EXPECT_EQ(grads[0].data<float>()[0], 3.0f);
  EXPECT_EQ(grads[1].data<float>()[1], -12.0f);
}

TEST(GradClip, NormEqualToTheMaximumStillScalesByTheEpsilon) {
  // 13 / (13 + 1e-6) is just below 1: torch scales by it, and so do we.
  auto backend = make_backend(BackendKind::cpu);
  std::vector<Tensor> grads = gradients();
  clip_grad_norm(*backend, grads, 13.0);
  EXPECT_FLOAT_EQ(grads[1].data<float>()[1], static_cast<float>(-12.0 * 13.0 / (13.0 + 1e-6)));
}

TEST(GradClip, NonFiniteNormLeavesGradientsForTheLossScaler) {
  auto backend = make_backend(BackendKind::cpu);
  std::vector<Tensor> grads = {filled({1.0f, std::numeric_limits<float>::quiet_NaN()})};
  EXPECT_TRUE(std::isnan(clip_grad_norm(*backend, grads, 5.0)));
  EXPECT_EQ(grads[0].data<float>()[0], 1.0f);
}

}  // namespace
}  // namespace pfc
