// Whether a checkpoint fits the model it is restored into, tensor for tensor: every parameter,
// optimiser moment and buffer of the model must come from the checkpoint with its shape, and every
// tensor of the checkpoint must land in the model. Anything else (a deeper or wider backbone
// than the one saved) would leave part of the model freshly initialised behind a "resumed".
#pragma once

#include <filesystem>

#include "config/config.h"
#include "io/checkpoint.h"
#include "model/backbone.h"

namespace pfc {

// Throws pfc::UsageError naming the checkpoint, the first missing or extra tensor (or the
// first whose shape differs), and the keys in which the checkpoint's saved config and `cfg`
// differ.
void check_checkpoint_fits_model(const Checkpoint& checkpoint, const Backbone& model,
                                 const Config& cfg, const std::filesystem::path& folder);

}  // namespace pfc
