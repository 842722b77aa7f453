// A backbone in inference mode (PyTorch's model.eval(): every batch-norm uses its running
// statistics) told as a sequence of layer applications on symbolic values, for writers of
// other model formats (ONNX). Each layer traces itself through this interface, as torch.onnx
// traces a module, in PyTorch's terms: NCHW values, weights in PyTorch layout under their
// state_dict names. So a writer never needs to know which network it writes, and every
// network built from these layers (iresnet; MobileFaceNet: grouped and depthwise
// convolutions, the GDC head, a Linear without bias, BatchNorm1d; the Vision Transformers:
// tokens, LayerNorm, multi-head self-attention, ReLU6) can be written by it.
#pragma once

#include <cstdint>

#include "core/named_tensor.h"

namespace pfc {

// A value of the graph ([n, c, h, w], [n, tokens, c] or [n, c]; n is the batch, left open),
// made by the writer; layers only pass it on.
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

  // Convolution; weight [out, in / groups, k, k]; bias [out], null for bias=False.
  virtual GraphValue convolution(GraphValue x, const NamedTensor& weight,
                                 const NamedTensor* bias, const ConvolutionSpec& spec) = 0;
  // Per channel (dimension 1): (x - mean) / sqrt(var + eps) * scale + shift, on [n, c, h, w]
  // (BatchNorm2d) or [n, c] (BatchNorm1d).
  virtual GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                                const NamedTensor& running_mean, const NamedTensor& running_var,
                                double eps) = 0;
  // max(x, 0) + slope[c] * min(x, 0), one slope per channel (dimension 1).
  virtual GraphValue prelu(GraphValue x, const NamedTensor& slope) = 0;
  virtual GraphValue add(GraphValue a, GraphValue b) = 0;
  // Every dimension after the batch as one, in PyTorch's order: [n, c, h, w] -> [n, c*h*w]
  // (index c*h*w + y*w + x); [n, t, c] -> [n, t*c] (index t*c + c).
  virtual GraphValue flatten(GraphValue x) = 0;
  // Over the last dimension: x [n, in] or [n, t, in] -> x weightᵀ (+ bias); weight [out, in];
  // bias null for Linear(bias=False).
  virtual GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) = 0;

  // ---- the Vision Transformers' layers, on tokens [n, t, c] ------------------------------
  // [n, c, h, w] -> [n, h*w, c]: a patch convolution's map as tokens, x.flatten(2).transpose(1, 2).
  virtual GraphValue tokens(GraphValue x) = 0;
  // x + p with p [1, ...] of x's shape after the batch (a learned position embedding).
  virtual GraphValue add_parameter(GraphValue x, const NamedTensor& p) = 0;
  // LayerNorm over the last dimension: (x - mean) / sqrt(biased var + eps) * scale + shift.
  virtual GraphValue layer_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                                double eps) = 0;
  // min(max(x, 0), 6).
  virtual GraphValue relu6(GraphValue x) = 0;
  // Multi-head self-attention after its qkv Linear: qkv [n, t, 3c], each token's q, k and v
  // one after the other, each [heads, c / heads] -> per head softmax(q kᵀ / sqrt(c / heads)) v,
  // the heads side by side: [n, t, c].
  virtual GraphValue attention(GraphValue qkv, std::int64_t heads) = 0;
};

}  // namespace pfc
