// make_backbone, the one factory of networks: `network` names an iresnet (r18 ... r200,
// "custom"), a MobileFaceNet ("mbf", "mbf_large") or a Vision Transformer (vit_t ... vit_h,
// "vit"), built with the config's sizes and
// activation type; describe_network names what a config holds, and check_same_network tells a
// checkpoint's network from another even where the depths coincide.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "model/iresnet.h"
#include "model/make_backbone.h"
#include "model/mobilefacenet.h"
#include "model/vision_transformer.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

Config with_network(const std::string& network) {
  Config cfg;
  cfg.network = network;
  cfg.embedding_size = 128;
  return cfg;
}

TEST(MakeBackbone, MbfIsArcfaceTorchsGetMbf) {
  CpuBackend backend;
  const auto model = make_backbone(with_network("mbf"), backend, DType::f64);
  const auto* mbf = dynamic_cast<const MobileFaceNet*>(model.get());
  ASSERT_NE(mbf, nullptr) << model->describe();
  EXPECT_EQ(mbf->options().blocks, (std::vector<std::int64_t>{1, 4, 6, 2}));
  EXPECT_EQ(mbf->options().scale, 2);
  EXPECT_EQ(model->embedding_size(), 128);
  EXPECT_EQ(model->master_dtype(), DType::f64);
  EXPECT_EQ(model->describe(),
            "MobileFaceNet [1, 4, 6, 2], scale 2, embedding 128, 112x112 images");

  const auto large = make_backbone(with_network("mbf_large"), backend, DType::f32);
  const auto* mbf_large = dynamic_cast<const MobileFaceNet*>(large.get());
  ASSERT_NE(mbf_large, nullptr) << large->describe();
  EXPECT_EQ(mbf_large->options().blocks, (std::vector<std::int64_t>{2, 8, 12, 4}));
  EXPECT_EQ(mbf_large->options().scale, 4);
}

TEST(MakeBackbone, IResNetsByDepth) {
  CpuBackend backend;
  Config cfg = with_network("custom");
  cfg.layers = {1, 1, 1, 1};
  cfg.widths = {8, 8, 16, 16};
  cfg.image_size = 32;
  const auto model = make_backbone(cfg, backend, DType::f32);
  ASSERT_NE(dynamic_cast<const IResNet*>(model.get()), nullptr) << model->describe();
  EXPECT_EQ(model->image_size(), 32);
}

TEST(MakeBackbone, DescribesEitherFamily) {
  EXPECT_EQ(describe_network(with_network("mbf")),
            "mbf (MobileFaceNet [1, 4, 6, 2], scale 2, embedding 128, 112x112 images)");
  EXPECT_EQ(describe_network(with_network("r18")),
            "r18 (iresnet [2, 2, 2, 2], widths [64, 128, 256, 512], embedding 128, 112x112 "
            "images)");
}

TEST(MakeBackbone, SameNetworkNeedsTheSameFamilyAndScale) {
  const Config mbf = with_network("mbf");
  // widths shape no MobileFaceNet.
  Config wider = mbf;
  wider.widths = {8, 8, 8, 8};
  EXPECT_NO_THROW(check_same_network(mbf, wider, "checkpoint 'c'"));
  // An iresnet of mbf's depths is another network.
  Config custom = with_network("custom");
  custom.layers = {1, 4, 6, 2};
  const std::string mbf_then_custom =
      test::usage_error([&] { check_same_network(mbf, custom, "checkpoint 'c'"); });
  EXPECT_NE(mbf_then_custom.find("checkpoint 'c' holds the network mbf (MobileFaceNet"),
            std::string::npos)
      << mbf_then_custom;
  EXPECT_NE(mbf_then_custom.find("the config asks for custom (iresnet [1, 4, 6, 2]"),
            std::string::npos)
      << mbf_then_custom;
  const std::string custom_then_mbf =
      test::usage_error([&] { check_same_network(custom, mbf, "checkpoint 'c'"); });
  EXPECT_NE(custom_then_mbf.find("holds the network custom (iresnet"), std::string::npos)
      << custom_then_mbf;
  const std::string large = test::usage_error(
      [&] { check_same_network(mbf, with_network("mbf_large"), "checkpoint 'c'"); });
  EXPECT_NE(large.find("asks for mbf_large (MobileFaceNet [2, 8, 12, 4], scale 4"),
            std::string::npos)
      << large;
}

// The ViTs of the table take get_model's dimensions; "vit" the config's keys. A checkpoint of
// one is refused for another width or depth, naming both.
TEST(MakeBackbone, VisionTransformersOfTheTableAndOfTheKeys) {
  CpuBackend backend;
  const auto model = make_backbone(with_network("vit_t_dp005_mask0"), backend, DType::f32);
  const auto* vit = dynamic_cast<const VisionTransformer*>(model.get());
  ASSERT_NE(vit, nullptr) << model->describe();
  EXPECT_EQ(vit->options().embed_dim, 256);
  EXPECT_EQ(vit->options().depth, 12);
  EXPECT_EQ(vit->options().mask_ratio, 0.0);
  EXPECT_FALSE(vit->options().checkpoint);
  EXPECT_EQ(model->embedding_size(), 128);
  Config custom = with_network("vit");
  custom.embed_dim = 64;
  custom.depth = 2;
  custom.num_heads = 4;
  const auto small = make_backbone(custom, backend, DType::f64);
  EXPECT_EQ(dynamic_cast<const VisionTransformer*>(small.get())->options().embed_dim, 64);
  EXPECT_NO_THROW(check_same_network(with_network("vit_t"), with_network("vit_t_dp005_mask0"),
                                     "checkpoint 'c'"));
  const std::string other = test::usage_error(
      [&] { check_same_network(with_network("vit_t"), with_network("vit_s"), "checkpoint 'c'"); });
  EXPECT_NE(other.find("holds the network vit_t (Vision Transformer: embed 256, depth 12"),
            std::string::npos)
      << other;
  EXPECT_NE(other.find("asks for vit_s (Vision Transformer: embed 512"), std::string::npos)
      << other;
}

}  // namespace
}  // namespace pfc
