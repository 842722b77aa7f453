#include "config/network_layers.h"

#include <string_view>

#include "core/error.h"

namespace pfc {

namespace {

struct NamedNetwork {
  std::string_view name;
  NetworkFamily family;
  std::vector<std::int64_t> layers;
  std::int64_t scale = 0;  // MobileFaceNet only
  VitShape vit = {};       // Vision Transformer only
};

constexpr auto kVit = NetworkFamily::vision_transformer;

const NamedNetwork kNetworks[] = {
    {"r18", NetworkFamily::iresnet, {2, 2, 2, 2}},
    {"r34", NetworkFamily::iresnet, {3, 4, 6, 3}},
    {"r50", NetworkFamily::iresnet, {3, 4, 14, 3}},
    {"r100", NetworkFamily::iresnet, {3, 13, 30, 3}},
    {"r200", NetworkFamily::iresnet, {6, 26, 60, 6}},
    {"custom", NetworkFamily::iresnet, {}},
    {"mbf", NetworkFamily::mobilefacenet, {1, 4, 6, 2}, 2},
    {"mbf_large", NetworkFamily::mobilefacenet, {2, 8, 12, 4}, 4},
    // arcface_torch's get_model: embed, depth, heads, drop path, mask ratio, checkpointing.
    {"vit_t", kVit, {}, 0, {256, 12, 8, 0.1, 0.1, false}},
    {"vit_t_dp005_mask0", kVit, {}, 0, {256, 12, 8, 0.05, 0.0, false}},
    {"vit_s", kVit, {}, 0, {512, 12, 8, 0.1, 0.1, false}},
    {"vit_s_dp005_mask_0", kVit, {}, 0, {512, 12, 8, 0.05, 0.0, false}},
    {"vit_b", kVit, {}, 0, {512, 24, 8, 0.1, 0.1, true}},
    {"vit_b_dp005_mask_005", kVit, {}, 0, {512, 24, 8, 0.05, 0.05, true}},
    {"vit_l_dp005_mask_005", kVit, {}, 0, {768, 24, 8, 0.05, 0.05, true}},
    {"vit_h", kVit, {}, 0, {1024, 48, 8, 0.1, 0.0, true}},
    {"vit", kVit, {}, 0, {}},
};

const NamedNetwork& named(const Config& cfg) {
  for (const NamedNetwork& n : kNetworks)
    if (n.name == cfg.network) return n;
  throw UsageError(fmt::format(
      "unknown network \"{}\"; allowed: r18|r34|r50|r100|r200|custom|mbf|mbf_large|vit_t|"
      "vit_t_dp005_mask0|vit_s|vit_s_dp005_mask_0|vit_b|vit_b_dp005_mask_005|"
      "vit_l_dp005_mask_005|vit_h|vit",
      cfg.network));
}

}  // namespace

NetworkFamily network_family(const Config& cfg) { return named(cfg).family; }

std::vector<std::int64_t> network_layers(const Config& cfg) {
  if (cfg.network == "custom") return cfg.layers;
  if (named(cfg).family == NetworkFamily::vision_transformer) return {vit_shape(cfg).depth};
  return named(cfg).layers;
}

VitShape vit_shape(const Config& cfg) {
  const NamedNetwork& n = named(cfg);
  if (n.family != NetworkFamily::vision_transformer)
    throw UsageError(fmt::format("network \"{}\" is no Vision Transformer", cfg.network));
  if (cfg.network != "vit") return n.vit;
  return {cfg.embed_dim,      cfg.depth,      cfg.num_heads,
          cfg.drop_path_rate, cfg.mask_ratio, cfg.using_checkpoint};
}

std::int64_t mobilefacenet_scale(const Config& cfg) {
  const NamedNetwork& n = named(cfg);
  if (n.family != NetworkFamily::mobilefacenet)
    throw UsageError(fmt::format("network \"{}\" is no MobileFaceNet", cfg.network));
  return n.scale;
}

}  // namespace pfc
