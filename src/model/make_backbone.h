// The one place that turns a config's network keys (network, layers, widths, image_size,
// embedding_size) into a Backbone, an IResNet or a MobileFaceNet: the trainer, the checkpoint
// opener and the tools build networks only through it, so a new network is added here and
// nowhere else.
#pragma once

#include <memory>
#include <string>

#include "config/config.h"
#include "model/backbone.h"
#include "model/model_context.h"

namespace pfc {

// The network `cfg` names, on `backend`, computing in `precision` (f32; the backend's fp16 mode,
// AllocationPolicy::network; f64 for the CPU reference). Parameters are allocated, not set.
std::unique_ptr<Backbone> make_backbone(const Config& cfg, Backend& backend,
                                        const NetworkPrecision& precision);

// "r50 (iresnet [3, 4, 14, 3], widths [64, 128, 256, 512], embedding 512, 112x112 images)",
// "mbf (MobileFaceNet [1, 4, 6, 2], scale 2, embedding 512, 112x112 images)"
std::string describe_network(const Config& cfg);

// Throws a UsageError when the network `saved` describes (a checkpoint's config) is not the
// one `wanted` asks for, naming `origin` and both networks.
void check_same_network(const Config& saved, const Config& wanted, const std::string& origin);

}  // namespace pfc
