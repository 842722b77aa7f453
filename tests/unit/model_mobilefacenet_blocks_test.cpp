// MobileFaceNet's blocks one by one (Caffe's habit), in f64 on the CPU backend: ConvBlock and
// LinearBlock (grouped convolution, batch-norm, PReLU), DepthWise with and without its
// residual, and the GDC head; each backward (the input's gradient and every parameter's)
// against central differences of its forward (the shared checker), and the state_dict names
// each block gives its tensors.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "model/conv_block.h"
#include "model/depthwise_block.h"
#include "model/gdc_head.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

class MobileFaceNetBlocks : public ::testing::Test {
 protected:
  // d sum(R * block(x)) / dx and / d every parameter of the block against central
  // differences. The parameters start random (batch-norm scales and PReLU slopes included, so
  // no layer is the identity); the block's f64 masters are the checked inputs themselves.
  template <class Block>
  void check_gradients(Block& block, const Shape& input, std::uint64_t seed) {
    std::vector<Parameter*> parameters;
    std::vector<Buffer*> buffers;
    block.collect(parameters, buffers);
    std::vector<test::GradInput> inputs{
        {"x", test::random_uniform(input, DType::f64, seed)}};
    for (const Parameter* p : parameters) {
      ASSERT_EQ(p->value.dtype(), DType::f64) << p->name;
      inputs.push_back({p->name, test::random_uniform(p->value.shape(), DType::f64, ++seed,
                                                      -0.8, 0.8)});
    }
    const auto load = [&](const std::vector<Tensor>& in) {
      for (std::size_t i = 0; i < parameters.size(); ++i)
        backend_.copy(in[i + 1], parameters[i]->value);
    };
    test::check_gradients(
        inputs,
        [&](const std::vector<Tensor>& in) {
          load(in);
          const Tensor y = block.forward(in[0], ForwardMode::training);
          block.release();
          return std::vector<Tensor>{y};
        },
        [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
          load(in);
          block.forward(in[0], ForwardMode::training);
          std::vector<Tensor> grads{block.backward(dout[0])};
          for (const Parameter* p : parameters) grads.push_back(p->grad);
          return grads;
        });
  }

  static std::vector<std::string> names(const std::vector<Parameter*>& parameters) {
    std::vector<std::string> out;
    for (const Parameter* p : parameters) out.push_back(p->name);
    return out;
  }

  CpuBackend backend_;
  ModelContext ctx_{&backend_, DType::f64};
};

TEST_F(MobileFaceNetBlocks, GroupedConvBlock) {
  ConvBlock block(ctx_, "b", {4, 6, 3, 1, 1, 2}, ConvBlock::Activation::prelu);
  check_gradients(block, {2, 5, 5, 4}, 1);
}

TEST_F(MobileFaceNetBlocks, StridedLinearBlock) {
  ConvBlock block(ctx_, "b", {3, 4, 3, 2, 1, 1}, ConvBlock::Activation::none);
  check_gradients(block, {2, 6, 5, 3}, 2);
}

TEST_F(MobileFaceNetBlocks, ResidualDepthWise) {
  DepthWise block(ctx_, "u", {4, 4, 6, 3, 1, 1, true});
  check_gradients(block, {2, 5, 5, 4}, 3);
}

TEST_F(MobileFaceNetBlocks, StridedDepthWise) {
  DepthWise block(ctx_, "u", {4, 5, 6, 3, 2, 1, false});
  check_gradients(block, {2, 6, 6, 4}, 4);
}

TEST_F(MobileFaceNetBlocks, GdcHead) {
  GdcHead head(ctx_, "features", 6, 3);
  check_gradients(head, {4, 7, 7, 6}, 5);
}

TEST_F(MobileFaceNetBlocks, StateDictNames) {
  std::vector<Parameter*> parameters;
  std::vector<Buffer*> buffers;
  DepthWise unit(ctx_, "layers.3.layers.1", {4, 4, 6, 3, 1, 1, true});
  unit.collect(parameters, buffers);
  const std::string u = "layers.3.layers.1.layers.";
  EXPECT_EQ(names(parameters),
            (std::vector<std::string>{
                u + "0.layers.0.weight", u + "0.layers.1.weight", u + "0.layers.1.bias",
                u + "0.layers.2.weight", u + "1.layers.0.weight", u + "1.layers.1.weight",
                u + "1.layers.1.bias", u + "1.layers.2.weight", u + "2.layers.0.weight",
                u + "2.layers.1.weight", u + "2.layers.1.bias"}));
  EXPECT_EQ(parameters[4]->torch_shape, (Shape{6, 1, 3, 3})) << "depthwise: one input each";
  EXPECT_EQ(buffers.size(), 6u);

  parameters.clear();
  buffers.clear();
  GdcHead head(ctx_, "features", 6, 3);
  head.collect(parameters, buffers);
  EXPECT_EQ(names(parameters), (std::vector<std::string>{
                                   "features.layers.0.layers.0.weight",
                                   "features.layers.0.layers.1.weight",
                                   "features.layers.0.layers.1.bias", "features.layers.2.weight",
                                   "features.layers.3.weight", "features.layers.3.bias"}));
  EXPECT_EQ(parameters[0]->torch_shape, (Shape{6, 1, 7, 7}));
  EXPECT_EQ(parameters[3]->torch_shape, (Shape{3, 6})) << "Linear(6, 3, bias=False)";
}

TEST_F(MobileFaceNetBlocks, ResidualDepthWiseMustKeepTheShape) {
  EXPECT_THROW(DepthWise(ctx_, "u", {4, 4, 6, 3, 2, 1, true}), Error);
  EXPECT_THROW(DepthWise(ctx_, "u", {4, 5, 6, 3, 1, 1, true}), Error);
}

}  // namespace
}  // namespace pfc
