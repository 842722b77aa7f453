// Writes the layers a backbone describes (model/inference_graph.h) into an ONNX graph
// (opset 11, as insightface's torch2onnx.py exports), node for node as torch.onnx writes the
// same PyTorch modules, so that any runtime or tool that reads torch's exports reads these:
// - Conv (with its bias input when the layer has one), BatchNormalization (a BatchNorm1d
//   between an Unsqueeze and a Squeeze of axis 2), PRelu, Add, Flatten (axis 1);
// - a Linear on [N, in]: Gemm (transB 1); on tokens [N, T, in]: MatMul by the transposed
//   weight (initializer "NAME.T" [in, out]) and an Add of the bias;
// - tokens: Reshape [N, C, H*W] -> Transpose (0, 2, 1); a position embedding: Add;
// - LayerNorm, which opset 11 has no op for, as torch decomposes it there: ReduceMean(-1),
//   Sub, Pow 2, ReduceMean(-1), Add eps, Sqrt, Div, Mul scale, Add shift;
// - ReLU6: Clip(0, 6);
// - attention, as vit.py's is traced: Reshape [N, T, 3, heads, d] -> Transpose (2, 0, 3, 1, 4)
//   -> Gather 0, 1, 2 (q, k, v) -> MatMul(q, Transpose(k, (0, 1, 3, 2))) -> Mul 1/sqrt(d) ->
//   Softmax(-1) -> MatMul(·, v) -> Transpose (0, 2, 1, 3) -> Reshape [N, T, heads*d].
// Each weight is an initializer under its state_dict name; the graph's own constants (shapes,
// indices, eps, the Clip bounds) are Constant nodes. The batch dimension stays open: the
// Reshapes copy it (0). Every value's shape is followed, so that a layer whose weights do not
// fit its input stops the export.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/inference_graph.h"

namespace pfc {

class OnnxGraphWriter final : public InferenceGraph {
 public:
  // The graph gets one input, `input_name` [N, 3, image_size, image_size] f32, N dynamic.
  OnnxGraphWriter(onnx::GraphProto& graph, const std::string& input_name,
                  std::int64_t image_size);

  GraphValue input() const { return GraphValue{0}; }
  // Declares `value` the graph's output under `name`; it must be [N, features].
  void set_output(GraphValue value, const std::string& name);

  GraphValue convolution(GraphValue x, const NamedTensor& weight, const NamedTensor* bias,
                         const ConvolutionSpec& spec) override;
  GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        const NamedTensor& running_mean, const NamedTensor& running_var,
                        double eps) override;
  GraphValue prelu(GraphValue x, const NamedTensor& slope) override;
  GraphValue add(GraphValue a, GraphValue b) override;
  GraphValue flatten(GraphValue x) override;
  GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) override;
  GraphValue tokens(GraphValue x) override;
  GraphValue add_parameter(GraphValue x, const NamedTensor& p) override;
  GraphValue layer_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        double eps) override;
  GraphValue relu6(GraphValue x) override;
  GraphValue attention(GraphValue qkv, std::int64_t heads) override;

 private:
  struct Value {
    std::string name;
    Shape shape;  // dimension 0 (the batch) is -1
  };

  const Value& value(GraphValue v) const;
  GraphValue new_value(const std::string& name, Shape shape);
  // A node name not used before, from the layer's name ("layer1.0.conv1") or an op ("Add").
  std::string unique_name(const std::string& base);
  // Adds `tensor` as an initializer of the given shape (its element count must match).
  const std::string& add_initializer(const NamedTensor& tensor, const Shape& shape);
  onnx::NodeProto& add_node(const std::string& op_type, const std::string& name,
                            const std::vector<std::string>& inputs, const std::string& output);
  // A node `op_type` named `name` (made unique) on `inputs`, whose output is a new value of
  // `shape`; the node is returned for its attributes.
  struct Applied {
    onnx::NodeProto& node;
    GraphValue value;
  };
  Applied apply(const std::string& op_type, const std::string& name,
                const std::vector<std::string>& inputs, Shape shape);
  // Constant nodes: an int64 vector (a Reshape's shape), an int64 scalar (a Gather's index)
  // and a float scalar. Each returns its output's name.
  std::string int64_constant(const std::string& name, const std::vector<std::int64_t>& values);
  std::string int64_scalar(const std::string& name, std::int64_t value);
  std::string float_scalar(const std::string& name, double value);
  std::string constant(const std::string& name, onnx::TensorProto tensor);
  // Reshape of x to `target` (0: the input's dimension, as for the batch) with that shape.
  GraphValue reshape(GraphValue x, const std::string& name,
                     const std::vector<std::int64_t>& target, Shape shape);
  GraphValue transpose(GraphValue x, const std::string& name,
                       const std::vector<std::int64_t>& perm);
  // The matrix product of x [N, T, in] and weightᵀ (plus the bias), as torch writes a Linear
  // on more than two dimensions.
  GraphValue token_linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias);

  onnx::GraphProto& graph_;
  std::vector<Value> values_;
  std::set<std::string> names_;
  std::map<std::string, int> op_counts_;
};

// The layer name of a state_dict entry: "layer1.0.bn1.running_mean" -> "layer1.0.bn1".
std::string layer_name(const std::string& state_dict_name);

}  // namespace pfc
