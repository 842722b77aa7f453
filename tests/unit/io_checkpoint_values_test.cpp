// check_checkpoint_values: a state holding NaN, an infinity or a value whose square overflows
// f32 is refused with the tensor, the element and the value; a trainable state passes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "io/checkpoint_values.h"

namespace pfc {
namespace {

Tensor filled(const Shape& shape, float value) {
  Tensor t = Tensor::host(shape, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
  return t;
}

Checkpoint good_checkpoint() {
  Checkpoint c;
  c.parameters = {{"conv1.weight", filled({4, 3, 3, 3}, 0.5f)}};
  c.moments = {{"exp_avg", {{"conv1.weight", filled({4, 3, 3, 3}, -0.25f)}}},
               {"exp_avg_sq", {{"conv1.weight", filled({4, 3, 3, 3}, 0.0625f)}}}};
  c.buffers = {{"bn1.running_var", filled({4}, 1.0f)}};
  c.shard.class_start = 100;
  c.shard.weight = filled({3, 5}, 0.01f);
  c.shard.moments = {{"exp_avg", filled({3, 5}, 0.0f)}, {"exp_avg_sq", filled({3, 5}, 0.0f)}};
  c.state.loss_scale = 128.0;
  return c;
}

std::string refusal(const Checkpoint& c) {
  try {
    check_checkpoint_values(c, "checkpoint 'x'");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CheckpointValues, ATrainableStatePasses) {
  Checkpoint c = good_checkpoint();
  c.shard.weight.data<float>()[0] = 1.8e19f;  // large, but its square still fits
  EXPECT_EQ(refusal(c), "accepted");
}

TEST(CheckpointValues, NonFiniteOrHugeValuesAreNamed) {
  Checkpoint c = good_checkpoint();
  c.parameters[0].value.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(refusal(c), "checkpoint 'x': backbone parameter 'conv1.weight' element 7 is NaN");

  c = good_checkpoint();
  c.buffers[0].value.data<float>()[2] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(refusal(c), "checkpoint 'x': backbone buffer 'bn1.running_var' element 2 is -inf");

  // Every optimiser moment, by its name (AdamW's two here).
  c = good_checkpoint();
  c.moments[1].tensors[0].value.data<float>()[0] = std::numeric_limits<float>::infinity();
  EXPECT_NE(refusal(c).find("exp_avg_sq of backbone parameter 'conv1.weight' element 0 is +inf"),
            std::string::npos);

  c = good_checkpoint();
  c.shard.moments[0].value.data<float>()[2 * 5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(refusal(c).find("the exp_avg of the class centre of class 102 (element 0) is NaN"),
            std::string::npos)
      << refusal(c);

  c = good_checkpoint();
  c.shard.weight.data<float>()[1 * 5 + 4] = 3.4e38f;
  const std::string text = refusal(c);
  EXPECT_NE(text.find("the class centre of class 101 (element 4) is 3.4e+38"), std::string::npos)
      << text;
  EXPECT_NE(text.find("square overflows f32"), std::string::npos) << text;

  c = good_checkpoint();
  c.state.loss_scale = std::nan("");
  EXPECT_NE(refusal(c).find("loss scale"), std::string::npos);
}

}  // namespace
}  // namespace pfc
