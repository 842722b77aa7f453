// One contiguous buffer each for the values, gradients and working copies of the trainable
// parameters, each parameter's tensors becoming views into them (an optimiser's moments are
// buffers of the same layout, see view_of). A training step
// then all-reduces, unscales, checks, clips and updates the backbone once, and refreshes its
// working copies with one cast, instead of once per tensor (r50 has 161 trainable tensors,
// each costing a kernel launch or a collective), as DistributedDataParallel's buckets and
// PyTorch's multi-tensor optimisers do.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "model/parameter.h"

namespace pfc {

struct FlatParameters {
  Tensor value;     // masters: f32, or f64 in an f64 run
  Tensor grad;      // same type and layout as value
  // The parameters that have a working copy come first, so their masters form one run of
  // value; `working` holds their copies in the same layout. Both undefined when none has one.
  Tensor working_values;
  Tensor working;
  bool decay = true;  // whether weight decay applies; every flattened parameter agrees

  // Working copies := masters, in one cast.
  void refresh_working_copies(Backend& backend);

  // The part of `buffer` (any buffer laid out like value: an optimiser moment) that holds p,
  // in p's shape. p must be one of the flattened parameters.
  Tensor view_of(const Parameter& p, const Tensor& buffer) const;

  // Where each flattened parameter starts in value, in elements.
  std::vector<std::pair<const Parameter*, std::int64_t>> offsets;
};

// Moves the trainable ones among `parameters` into flat buffers with their current contents
// and re-points their value, grad and working tensors at views, whose shapes are unchanged;
// the previous tensors are released. Frozen
// parameters keep their own tensors. Anything that writes into the views (an optimiser step,
// a checkpoint restore) writes into the flat buffers; a Parameter whose tensors are replaced
// instead would leave them.
FlatParameters flatten_parameters(Backend& backend, const std::vector<Parameter*>& parameters);

}  // namespace pfc
