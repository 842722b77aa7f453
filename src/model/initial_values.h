// Where a backbone writes a parameter's initial values before they go to its device.
#pragma once

#include <optional>

#include "backend/backend.h"
#include "core/tensor.h"
#include "model/parameter.h"

namespace pfc {

// A host buffer (f32, the parameter's shape) for `p`'s initial values, or nothing on the meta
// device: a plan holds no values, so there only the buffer's size is counted and its copy into
// the parameter planned.
std::optional<Tensor> initial_values_buffer(Backend& backend, Parameter& p);

}  // namespace pfc
