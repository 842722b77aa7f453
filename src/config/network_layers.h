// The backbone named by Config::network: its family and blocks per stage (SPEC: iresnet
// depths; arcface_torch's get_mbf and get_mbf_large).
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"

namespace pfc {

enum class NetworkFamily { iresnet, mobilefacenet, vision_transformer };

// r18 ... r200 and "custom" are iresnets; "mbf" and "mbf_large" MobileFaceNets; vit_t ...
// vit_h and "vit" Vision Transformers. Any other name is a UsageError.
NetworkFamily network_family(const Config& cfg);

// A Vision Transformer's dimensions, as arcface_torch's get_model builds each name (9x9
// patches, MLP ratio 4); "vit": the config's embed_dim ... using_checkpoint.
struct VitShape {
  std::int64_t embed_dim = 0, depth = 0, num_heads = 0;
  double drop_path_rate = 0.0, mask_ratio = 0.0;
  bool using_checkpoint = false;

  bool operator==(const VitShape&) const = default;
};
// A UsageError for a network that is no Vision Transformer.
VitShape vit_shape(const Config& cfg);

// iresnet: r18 [2,2,2,2], r34 [3,4,6,3], r50 [3,4,14,3], r100 [3,13,30,3], r200 [6,26,60,6];
// "custom": cfg.layers. MobileFaceNet: the units of its four residual stages, mbf [1,4,6,2],
// mbf_large [2,8,12,4]. A Vision Transformer: its depth alone. Any other name is a UsageError.
std::vector<std::int64_t> network_layers(const Config& cfg);

// MobileFaceNet's channel multiplier: mbf 2, mbf_large 4 (a UsageError for an iresnet).
std::int64_t mobilefacenet_scale(const Config& cfg);

}  // namespace pfc
