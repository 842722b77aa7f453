#include "model/make_backbone.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/network_layers.h"
#include "model/iresnet.h"
#include "model/mobilefacenet.h"
#include "model/vision_transformer.h"

namespace pfc {

namespace {

IResNetOptions iresnet_options(const Config& cfg, const NetworkPrecision& precision) {
  IResNetOptions o;
  o.layers = network_layers(cfg);
  o.widths = cfg.widths;
  o.image_size = cfg.image_size;
  o.embedding_size = cfg.embedding_size;
  o.precision = precision;
  return o;
}

VisionTransformerOptions vision_transformer_options(const Config& cfg,
                                                    const NetworkPrecision& precision) {
  const VitShape shape = vit_shape(cfg);
  VisionTransformerOptions o;
  o.image_size = cfg.image_size;
  o.embed_dim = shape.embed_dim;
  o.depth = shape.depth;
  o.num_heads = shape.num_heads;
  o.drop_path_rate = shape.drop_path_rate;
  o.mask_ratio = shape.mask_ratio;
  o.checkpoint = shape.using_checkpoint;
  o.embedding_size = cfg.embedding_size;
  o.precision = precision;
  return o;
}

MobileFaceNetOptions mobilefacenet_options(const Config& cfg,
                                           const NetworkPrecision& precision) {
  MobileFaceNetOptions o;
  o.blocks = network_layers(cfg);
  o.scale = mobilefacenet_scale(cfg);
  o.image_size = cfg.image_size;
  o.embedding_size = cfg.embedding_size;
  o.precision = precision;
  return o;
}

}  // namespace

std::unique_ptr<Backbone> make_backbone(const Config& cfg, Backend& backend,
                                        const NetworkPrecision& precision) {
  if (network_family(cfg) == NetworkFamily::vision_transformer)
    return std::make_unique<VisionTransformer>(backend,
                                               vision_transformer_options(cfg, precision));
  if (network_family(cfg) == NetworkFamily::mobilefacenet)
    return std::make_unique<MobileFaceNet>(backend, mobilefacenet_options(cfg, precision));
  return std::make_unique<IResNet>(backend, iresnet_options(cfg, precision));
}

std::string describe_network(const Config& cfg) {
  if (network_family(cfg) == NetworkFamily::vision_transformer) {
    const VitShape v = vit_shape(cfg);
    return fmt::format("{} (Vision Transformer: embed {}, depth {}, {} heads, mask_ratio {}, "
                       "drop_path_rate {}{}, embedding {}, {}x{} images)",
                       cfg.network, v.embed_dim, v.depth, v.num_heads, v.mask_ratio,
                       v.drop_path_rate, v.using_checkpoint ? ", checkpointing" : "",
                       cfg.embedding_size, cfg.image_size, cfg.image_size);
  }
  if (network_family(cfg) == NetworkFamily::mobilefacenet)
    return fmt::format("{} (MobileFaceNet [{}], scale {}, embedding {}, {}x{} images)",
                       cfg.network, fmt::join(network_layers(cfg), ", "),
                       mobilefacenet_scale(cfg), cfg.embedding_size, cfg.image_size,
                       cfg.image_size);
  return fmt::format("{} (iresnet [{}], widths [{}], embedding {}, {}x{} images)", cfg.network,
                     fmt::join(network_layers(cfg), ", "), fmt::join(cfg.widths, ", "),
                     cfg.embedding_size, cfg.image_size, cfg.image_size);
}

void check_same_network(const Config& saved, const Config& wanted, const std::string& origin) {
  const NetworkFamily family = network_family(saved);
  // widths shape only an iresnet; a MobileFaceNet's channels follow from its scale, a ViT's
  // tensors from its embed width (and its depth, network_layers).
  const auto same_shape = [&] {
    switch (family) {
      case NetworkFamily::iresnet:
        return saved.widths == wanted.widths;
      case NetworkFamily::mobilefacenet:
        return mobilefacenet_scale(saved) == mobilefacenet_scale(wanted);
      case NetworkFamily::vision_transformer:
        return vit_shape(saved).embed_dim == vit_shape(wanted).embed_dim;
    }
    return false;
  };
  const bool same = family == network_family(wanted) &&
                    network_layers(saved) == network_layers(wanted) && same_shape() &&
                    saved.embedding_size == wanted.embedding_size &&
                    saved.image_size == wanted.image_size;
  if (!same)
    throw UsageError(fmt::format("{} holds the network {}, but the config asks for {}", origin,
                                 describe_network(saved), describe_network(wanted)));
}

}  // namespace pfc
