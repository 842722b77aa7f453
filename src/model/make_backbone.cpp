#include "model/make_backbone.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/network_layers.h"
#include "model/iresnet.h"
#include "model/mobilefacenet.h"

namespace pfc {

namespace {

IResNetOptions iresnet_options(const Config& cfg, DType activations) {
  IResNetOptions o;
  o.layers = network_layers(cfg);
  o.widths = cfg.widths;
  o.image_size = cfg.image_size;
  o.embedding_size = cfg.embedding_size;
  o.activations = activations;
  return o;
}

MobileFaceNetOptions mobilefacenet_options(const Config& cfg, DType activations) {
  MobileFaceNetOptions o;
  o.blocks = network_layers(cfg);
  o.scale = mobilefacenet_scale(cfg);
  o.image_size = cfg.image_size;
  o.embedding_size = cfg.embedding_size;
  o.activations = activations;
  return o;
}

}  // namespace

std::unique_ptr<Backbone> make_backbone(const Config& cfg, Backend& backend, DType activations) {
  if (network_family(cfg) == NetworkFamily::mobilefacenet)
    return std::make_unique<MobileFaceNet>(backend, mobilefacenet_options(cfg, activations));
  return std::make_unique<IResNet>(backend, iresnet_options(cfg, activations));
}

std::string describe_network(const Config& cfg) {
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
  // widths shape only an iresnet; a MobileFaceNet's channels follow from its scale.
  const bool same = family == network_family(wanted) &&
                    network_layers(saved) == network_layers(wanted) &&
                    (family == NetworkFamily::iresnet
                         ? saved.widths == wanted.widths
                         : mobilefacenet_scale(saved) == mobilefacenet_scale(wanted)) &&
                    saved.embedding_size == wanted.embedding_size &&
                    saved.image_size == wanted.image_size;
  if (!same)
    throw UsageError(fmt::format("{} holds the network {}, but the config asks for {}", origin,
                                 describe_network(saved), describe_network(wanted)));
}

}  // namespace pfc
