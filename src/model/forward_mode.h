// Whether a forward pass trains or only infers; every layer takes it.
#pragma once

namespace pfc {

enum class ForwardMode {
  training,   // batch statistics, running statistics updated, activations kept for backward
  inference,  // PyTorch's model.eval(): running statistics, nothing kept, any batch size
};

}  // namespace pfc
