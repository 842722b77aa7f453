// The family and blocks per stage of each backbone name.
#include <gtest/gtest.h>

#include "config/network_layers.h"
#include "core/error.h"

namespace pfc {
namespace {

using Layers = std::vector<std::int64_t>;

Layers layers_of(const std::string& network) {
  Config cfg;
  cfg.network = network;
  return network_layers(cfg);
}

TEST(ConfigNetworkLayers, NamedDepths) {
  EXPECT_EQ(layers_of("r18"), (Layers{2, 2, 2, 2}));
  EXPECT_EQ(layers_of("r34"), (Layers{3, 4, 6, 3}));
  EXPECT_EQ(layers_of("r50"), (Layers{3, 4, 14, 3}));
  EXPECT_EQ(layers_of("r100"), (Layers{3, 13, 30, 3}));
  EXPECT_EQ(layers_of("r200"), (Layers{6, 26, 60, 6}));
}

TEST(ConfigNetworkLayers, CustomUsesLayers) {
  Config cfg;
  cfg.network = "custom";
  cfg.layers = {1, 2, 1, 3};
  EXPECT_EQ(network_layers(cfg), (Layers{1, 2, 1, 3}));
}

TEST(ConfigNetworkLayers, NamedNetworkIgnoresLayers) {
  Config cfg;
  cfg.layers = {1, 1, 1, 1};
  EXPECT_EQ(network_layers(cfg), (Layers{3, 4, 14, 3}));
}

TEST(ConfigNetworkLayers, MobileFaceNets) {
  EXPECT_EQ(layers_of("mbf"), (Layers{1, 4, 6, 2}));
  EXPECT_EQ(layers_of("mbf_large"), (Layers{2, 8, 12, 4}));
  Config cfg;
  cfg.network = "mbf";
  EXPECT_EQ(network_family(cfg), NetworkFamily::mobilefacenet);
  EXPECT_EQ(mobilefacenet_scale(cfg), 2);
  cfg.network = "mbf_large";
  EXPECT_EQ(mobilefacenet_scale(cfg), 4);
  cfg.network = "r100";
  EXPECT_EQ(network_family(cfg), NetworkFamily::iresnet);
  EXPECT_THROW(mobilefacenet_scale(cfg), UsageError);
  cfg.network = "custom";
  EXPECT_EQ(network_family(cfg), NetworkFamily::iresnet);
}

TEST(ConfigNetworkLayers, UnknownNameIsAUsageError) {
  EXPECT_THROW(layers_of("r152"), UsageError);
  Config cfg;
  cfg.network = "vit_q";
  EXPECT_THROW(network_family(cfg), UsageError);
}

// arcface_torch's get_model: embed, depth, heads, drop path, mask ratio, checkpointing.
TEST(ConfigNetworkLayers, VisionTransformers) {
  const std::pair<const char*, VitShape> table[] = {
      {"vit_t", {256, 12, 8, 0.1, 0.1, false}},
      {"vit_t_dp005_mask0", {256, 12, 8, 0.05, 0.0, false}},
      {"vit_s", {512, 12, 8, 0.1, 0.1, false}},
      {"vit_s_dp005_mask_0", {512, 12, 8, 0.05, 0.0, false}},
      {"vit_b", {512, 24, 8, 0.1, 0.1, true}},
      {"vit_b_dp005_mask_005", {512, 24, 8, 0.05, 0.05, true}},
      {"vit_l_dp005_mask_005", {768, 24, 8, 0.05, 0.05, true}},
      {"vit_h", {1024, 48, 8, 0.1, 0.0, true}}};
  for (const auto& [name, shape] : table) {
    Config cfg;
    cfg.network = name;
    cfg.embed_dim = 64;  // the keys shape network = "vit" only
    EXPECT_EQ(network_family(cfg), NetworkFamily::vision_transformer) << name;
    EXPECT_EQ(vit_shape(cfg), shape) << name;
    EXPECT_EQ(network_layers(cfg), (Layers{shape.depth})) << name;
  }
  Config custom;
  custom.network = "vit";
  custom.embed_dim = 64;
  custom.depth = 2;
  custom.num_heads = 4;
  custom.mask_ratio = 0.0;
  custom.drop_path_rate = 0.3;
  custom.using_checkpoint = true;
  EXPECT_EQ(vit_shape(custom), (VitShape{64, 2, 4, 0.3, 0.0, true}));
  custom.network = "r50";
  EXPECT_THROW(vit_shape(custom), UsageError);
}

}  // namespace
}  // namespace pfc
