// Writes the layers a backbone describes (model/inference_graph.h) into an ONNX graph
// (opset 11, as insightface's torch2onnx.py exports): Conv, BatchNormalization, PRelu, Add,
// Flatten and Gemm nodes, each weight an initializer under its state_dict name. It follows
// every value's shape so that a layer whose weights do not fit its input stops the export.
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

  GraphValue convolution(GraphValue x, const NamedTensor& weight,
                         const ConvolutionSpec& spec) override;
  GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        const NamedTensor& running_mean, const NamedTensor& running_var,
                        double eps) override;
  GraphValue prelu(GraphValue x, const NamedTensor& slope) override;
  GraphValue add(GraphValue a, GraphValue b) override;
  GraphValue flatten(GraphValue x) override;
  GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) override;

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

  onnx::GraphProto& graph_;
  std::vector<Value> values_;
  std::set<std::string> names_;
  std::map<std::string, int> op_counts_;
};

// The layer name of a state_dict entry: "layer1.0.bn1.running_mean" -> "layer1.0.bn1".
std::string layer_name(const std::string& state_dict_name);

}  // namespace pfc
