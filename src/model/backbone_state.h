// A backbone's state (parameters and batch-norm buffers) from named host tensors in PyTorch
// layout, as a checkpoint holds them, checked to be exactly the network's first.
#pragma once

#include <string>
#include <vector>

#include "core/named_tensor.h"
#include "model/backbone.h"

namespace pfc {

// Every parameter and buffer of `backbone` must be there with its shape, and nothing else:
// otherwise a UsageError names `origin` and the differences (a checkpoint of another network).
// Then the values are copied in and the working copies refreshed.
void load_backbone_state(Backbone& backbone, const std::vector<NamedTensor>& parameters,
                         const std::vector<NamedTensor>& buffers, const std::string& origin);

// The copy alone, for tensors already checked to be exactly the network's (the trainer's
// resume checks them with the optimiser moments: train/checkpoint_model_match.h).
void import_backbone_state(Backbone& backbone, const std::vector<NamedTensor>& parameters,
                           const std::vector<NamedTensor>& buffers);

}  // namespace pfc
