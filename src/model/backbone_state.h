// A backbone's state (parameters and batch-norm buffers) from named host tensors in PyTorch
// layout, as a checkpoint holds them, checked to be exactly the network's first.
#pragma once

#include <string>
#include <vector>

#include "core/named_tensor.h"
#include "model/backbone.h"

namespace pfc {

// A tensor's name and shape, before (or without) its values.
struct NamedShape {
  std::string name;
  Shape shape;
};

// Every parameter and buffer of `backbone` must be named with its shape, and nothing else:
// otherwise a UsageError names `origin` and the differences (a model of another network).
// What a model file's values are checked against before any of them is read.
void check_backbone_shapes(const Backbone& backbone, const std::vector<NamedShape>& parameters,
                           const std::vector<NamedShape>& buffers, const std::string& origin);

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
