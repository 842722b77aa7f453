// A tensor under its arcface_torch state_dict name, f32, PyTorch layout, on the host: what
// checkpoints store and what model exporters read.
#pragma once

#include <string>

#include "core/tensor.h"

namespace pfc {

struct NamedTensor {
  std::string name;
  Tensor value;
};

}  // namespace pfc
