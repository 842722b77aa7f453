// A backbone in inference mode (PyTorch's model.eval(): every batch-norm uses its running
// statistics) told as a sequence of layer applications on symbolic values, for writers of
// other model formats (ONNX). Each layer traces itself through this interface, as torch.onnx
// traces a module, in PyTorch's terms: NCHW values, weights in PyTorch layout under their
// state_dict names. So a writer never needs to know which network it writes, and every
// network built from these layers (iresnet; MobileFaceNet: grouped and depthwise
// convolutions, the GDC head, a Linear without bias, BatchNorm1d) can be written by it.
#pragma once

#include <cstdint>

#include "core/named_tensor.h"

namespace pfc {

// A value of the graph ([n, c, h, w] or [n, c]; n is the batch, left open), made by the
// writer; layers only pass it on.
struct GraphValue {
  std::int64_t id = -1;
};

struct ConvolutionSpec {
  std::int64_t kernel = 1;  // square
  std::int64_t stride = 1;
  std::int64_t pad = 0;     // on every side
  std::int64_t groups = 1;  // in_channels for a depthwise convolution
};

class InferenceGraph {
 public:
  virtual ~InferenceGraph() = default;

  // Convolution without bias; weight [out, in / groups, k, k].
  virtual GraphValue convolution(GraphValue x, const NamedTensor& weight,
                                 const ConvolutionSpec& spec) = 0;
  // Per channel (dimension 1): (x - mean) / sqrt(var + eps) * scale + shift, on [n, c, h, w]
  // (BatchNorm2d) or [n, c] (BatchNorm1d).
  virtual GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                                const NamedTensor& running_mean, const NamedTensor& running_var,
                                double eps) = 0;
  // max(x, 0) + slope[c] * min(x, 0), one slope per channel (dimension 1).
  virtual GraphValue prelu(GraphValue x, const NamedTensor& slope) = 0;
  virtual GraphValue add(GraphValue a, GraphValue b) = 0;
  // [n, c, h, w] -> [n, c*h*w] in PyTorch's order (index c*h*w + y*w + x).
  virtual GraphValue flatten(GraphValue x) = 0;
  // x [n, in] -> x weightᵀ (+ bias); weight [out, in]; bias null for Linear(bias=False).
  virtual GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) = 0;
};

}  // namespace pfc
