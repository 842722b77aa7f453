// An inference network (batch-norms folded, PReLU and sums as convolution epilogues) against
// the plain inference forward it is prepared from, per network (iresnet, MobileFaceNet, the
// Vision Transformers): its embeddings within fp32's
// own error (relative 1e-5), every foldable batch-norm folded, and in bf16 the embedding of
// every image within cosine 0.999 of fp32's (where the CPU has bf16 instructions).
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "model/inference_network.h"
#include "model/iresnet.h"
#include "model/mobilefacenet.h"
#include "model/vision_transformer.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

struct NetworkCase {
  const char* name;
  // iresnet: the batch-norms that cannot fold, each block's bn1, and bn2; a ViT: per block
  // norm1, attention, norm2 and ReLU6, then the position embedding and the last norm
  std::int64_t standalone;
  // Above four, the batch goes through in more than one pass (the last one shorter).
  std::int64_t images;
  // In bf16, the convolutions' and LayerNorms' outputs that only convolutions or attention
  // read: iresnet's first convolution of each block (its PReLU in the epilogue);
  // mobilefacenet's stem and its grouped convolution, each depthwise unit's expansion and
  // depthwise convolution (15 units), its last 1x1 and the GDC; a ViT's two LayerNorms, qkv
  // and MLP hidden layer in each block, and the last LayerNorm and the feature head's first
  // Linear.
  std::int64_t bf16_values;
};

std::unique_ptr<Backbone> network(Backend& backend, const std::string& which) {
  if (which == "mbf") return std::make_unique<MobileFaceNet>(backend, MobileFaceNetOptions{});
  if (which.starts_with("vit")) {
    VisionTransformerOptions o;  // vit_t
    if (which == "vit_small") {
      o.embed_dim = 32;
      o.depth = 2;
      o.num_heads = 4;
      o.embedding_size = 24;
    }
    return std::make_unique<VisionTransformer>(backend, o);
  }
  IResNetOptions o;
  if (which == "r18") {
    o.layers = {2, 2, 2, 2};
  } else {
    o.layers = {1, 1, 1, 1};
    o.widths = {16, 16, 32, 32};
    o.image_size = 32;
    o.embedding_size = 24;
  }
  return std::make_unique<IResNet>(backend, o);
}

// Random running statistics and affine parameters, as a trained network has (initialize()
// leaves every batch-norm an identity and every PReLU slope 0.25).
void randomise(Backbone& model, Backend& backend) {
  std::uint64_t seed = 100;
  for (Buffer* b : model.buffers()) {
    const bool var = b->name.ends_with("running_var");
    backend.copy(test::random_uniform(b->value.shape(), DType::f32, ++seed, var ? 0.5 : -0.3,
                                      var ? 2.0 : 0.3),
                 b->value);
  }
  for (Parameter* p : model.parameters()) {
    if (p->value.rank() != 1) continue;
    const bool bias = p->name.ends_with("bias");
    backend.copy(test::random_uniform(p->value.shape(), DType::f32, ++seed, bias ? -0.2 : 0.5,
                                      bias ? 0.2 : 1.5),
                 p->value);
  }
}

double min_cosine(const Tensor& a, const Tensor& b) {
  const std::int64_t rows = a.dim(0), cols = a.dim(1);
  double worst = 1.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double ab = 0, aa = 0, bb = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double x = a.data<float>()[r * cols + c], y = b.data<float>()[r * cols + c];
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    worst = std::min(worst, ab / std::sqrt(aa * bb));
  }
  return worst;
}

class InferenceNetworkOf : public ::testing::TestWithParam<NetworkCase> {
 protected:
  void SetUp() override {
    model_ = network(backend_, GetParam().name);
    model_->initialize(7);
    randomise(*model_, backend_);
    const std::int64_t s = model_->image_size();
    images_ = test::random_uniform({GetParam().images, s, s, 3}, DType::f32, 8);
    plain_ = backend_.to_host(model_->forward(images_, ForwardMode::inference));
  }
  CpuBackend backend_;
  std::unique_ptr<Backbone> model_;
  Tensor images_, plain_;
};

TEST_P(InferenceNetworkOf, FusedMatchesThePlainForward) {
  InferenceNetwork fused(*model_, InferencePrecision::f32);
  EXPECT_EQ(fused.standalone_steps(), GetParam().standalone);
  const Tensor ours = backend_.to_host(fused.forward(images_));
  ASSERT_EQ(ours.shape(), plain_.shape());
  EXPECT_LE(test::relative_l2(ours, plain_), 1e-5);
  // One image alone (another batch size: other plans) gives its batched embedding.
  const Tensor alone = backend_.to_host(fused.forward(images_.rows(1, 2)));
  EXPECT_LE(test::relative_l2(alone, plain_.rows(1, 2)), 1e-5);
}

TEST_P(InferenceNetworkOf, PreparedBackboneInfersThroughIt) {
  model_->prepare_inference(InferencePrecision::f32);
  EXPECT_LE(test::relative_l2(backend_.to_host(model_->infer(images_)), plain_), 1e-5);
}

TEST_P(InferenceNetworkOf, Bf16EmbeddingsWithinCosine0999OfF32) {
  if (!cpu::onednn_bf16_native()) GTEST_SKIP() << "no bf16 instructions on this CPU";
  InferenceNetwork bf16(*model_, InferencePrecision::bf16);
  EXPECT_EQ(bf16.bf16_values(), GetParam().bf16_values);
  const Tensor ours = backend_.to_host(bf16.forward(images_));
  const double cosine = min_cosine(ours, plain_);
  EXPECT_GE(cosine, 0.999);
  RecordProperty("min_cosine", std::to_string(cosine));
}

INSTANTIATE_TEST_SUITE_P(Networks, InferenceNetworkOf,
                         ::testing::Values(NetworkCase{"iresnet", 5, 7, 4},
                                           NetworkCase{"r18", 9, 2, 8},
                                           NetworkCase{"mbf", 0, 3, 2 + 2 * 15 + 2},
                                           NetworkCase{"vit_small", 3 * 2 + 2, 6, 4 * 2 + 2},
                                           NetworkCase{"vit_t", 3 * 12 + 2, 2, 4 * 12 + 2}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(InferenceNetwork, AnF64NetworkStaysOnThePlainForwardAndRefusesBf16) {
  CpuBackend backend;
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {16, 16, 32, 32};
  o.image_size = 32;
  o.precision = DType::f64;
  IResNet model(backend, o);
  model.initialize(3);
  EXPECT_THROW(model.prepare_inference(InferencePrecision::bf16), Error);
  model.prepare_inference(InferencePrecision::f32);
  const Tensor images = test::random_uniform({1, 32, 32, 3}, DType::f64, 4);
  EXPECT_EQ(model.infer(images).dtype(), DType::f64);
}

}  // namespace
}  // namespace pfc
