// Gradient clipping by global L2 norm, as torch.nn.utils.clip_grad_norm_ (the seed clips the
// backbone's unscaled gradient to norm 5).
#pragma once

#include <span>

#include "backend/backend.h"

namespace pfc {

// sqrt of the sum of squares of every element of every tensor.
double global_l2_norm(Backend& backend, std::span<const Tensor> tensors);

// Multiplies every gradient by max_norm / (norm + 1e-6) when that is below 1, and returns the
// norm before clipping. A non-finite norm leaves the gradients as they are: such a step is
// the loss scaler's to skip.
double clip_grad_norm(Backend& backend, std::span<Tensor> grads, double max_norm);

}  // namespace pfc
