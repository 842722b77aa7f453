// A trained tensor of the model: its arcface_torch state_dict name, the master value in our
// layout (f32, or f64 in an f64 run), its gradient, and how to convert between our layout and
// PyTorch's.
#pragma once

#include <string>
#include <vector>

#include "core/named_tensor.h"
#include "core/tensor.h"

namespace pfc {

// How a parameter's PyTorch layout maps to ours.
enum class TorchLayout {
  same,             // vectors, Linear [out, in] whose input is not a feature map
  conv_oihw,        // ours OHWI
  linear_from_nchw  // fc.weight [out, C*H*W] with NCHW columns; ours NHWC columns
};

struct Parameter {
  std::string name;            // e.g. "layer3.7.bn2.weight"
  Tensor value;                // master (f32; f64 in an f64 run), our layout, on the device
  Tensor grad;                 // same shape and dtype as value
  Tensor working;              // f16 copy read by conv in fp16 mode, refreshed after every
                               // update; undefined where the layer computes in the master type
  Shape torch_shape;           // shape in PyTorch layout
  TorchLayout layout = TorchLayout::same;
  std::int64_t feature_channels = 0;  // linear_from_nchw: C of the flattened feature map
  std::int64_t feature_hw = 0;        // linear_from_nchw: H*W of the flattened feature map
  bool trainable = true;       // false for features.weight (frozen at 1.0)
  bool decay = true;           // weight decay applies (arcface_torch decays everything)
};

// A non-trained tensor saved with the model (batch-norm running statistics).
struct Buffer {
  std::string name;            // e.g. "bn1.running_mean"
  Tensor value;                // the masters' type: f32, or f64 in an f64 run
};

// Index/element order conversion between PyTorch layout and ours, on host data.
void torch_to_ours(const Parameter& p, const float* torch_data, float* ours);
void torch_to_ours(const Parameter& p, const double* torch_data, double* ours);
void ours_to_torch(const Parameter& p, const float* ours, float* torch_data);
void ours_to_torch(const Parameter& p, const double* ours, double* torch_data);

}  // namespace pfc

namespace pfc {

class Backend;

// A host copy of `ours` (the parameter's value, gradient or an optimiser moment, in our layout
// on the backend's device, f32 or f64) in PyTorch layout, of the same element type.
Tensor to_torch_layout(Backend& backend, const Parameter& p, const Tensor& ours);
// The parameter's value (or a buffer's) under its name, host f32 (an f64 run's rounded once),
// PyTorch layout.
NamedTensor torch_named_value(Backend& backend, const Parameter& p);
NamedTensor torch_named_value(Backend& backend, const Buffer& b);

// Allocates value and grad in the master type on the backend's device, and a working copy
// when the layer computes in another type (`compute`); values are set later by the
// initialiser or an import.
Parameter create_parameter(Backend& backend, DType master, DType compute, std::string name,
                           Shape our_shape, Shape torch_shape, TorchLayout layout);
Buffer create_buffer(Backend& backend, DType dtype, std::string name, Shape shape);

}  // namespace pfc
