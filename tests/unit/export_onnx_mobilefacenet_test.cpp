// MobileFaceNet as an ONNX model (the checker and strict shape inference run inside
// build_onnx_model): one node per layer, the grouped and depthwise convolutions with their
// group counts, the 7x7 GDC, a Gemm without bias, BatchNorm1d, and every tensor an
// initializer under its state_dict name. onnxruntime's embeddings against arcface_torch's
// are tests/onnx/onnx_golden_test.cpp.
#include <gtest/gtest.h>

#include <map>

#include "backend/cpu/cpu_backend.h"
#include "export/onnx_export.h"
#include "model/mobilefacenet.h"

namespace pfc {
namespace {

std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  ADD_FAILURE() << node.name() << " has no attribute " << name;
  return -1;
}

TEST(OnnxMobileFaceNet, GroupedConvolutionsAndTheGdcHead) {
  CpuBackend backend;
  MobileFaceNet model(backend, {});
  model.initialize(5);
  OnnxExportSource source;
  source.graph_name = "mbf";
  source.trace = [&](InferenceGraph& graph, GraphValue images) {
    return model.trace(graph, images);
  };
  const onnx::ModelProto onnx_model = build_onnx_model(source);
  const onnx::GraphProto& g = onnx_model.graph();

  std::map<std::string, int> ops;
  std::map<std::string, const onnx::NodeProto*> conv_by_weight;
  for (const auto& node : g.node()) {
    ++ops[node.op_type()];
    if (node.op_type() == "Conv") conv_by_weight[node.input(1)] = &node;
  }
  // 15 DepthWise units (1 + 4 + 1 + 6 + 1 + 2) of three convolutions, the stem, layers.1,
  // conv_sep and the GDC; 12 of the units are residual.
  const int units = 15, residual = 12;
  EXPECT_EQ(ops["Conv"], 3 * units + 4);
  EXPECT_EQ(ops["BatchNormalization"], 3 * units + 4 + 1);
  EXPECT_EQ(ops["PRelu"], 2 * units + 3);
  EXPECT_EQ(ops["Add"], residual);
  EXPECT_EQ(ops["Flatten"], 1);
  EXPECT_EQ(ops["Gemm"], 1);

  const auto group = [&](const std::string& weight) {
    const auto it = conv_by_weight.find(weight);
    if (it == conv_by_weight.end()) {
      ADD_FAILURE() << "no Conv reads " << weight;
      return std::int64_t{-1};
    }
    return int_attribute(*it->second, "group");
  };
  EXPECT_EQ(group("layers.0.layers.0.weight"), 1);
  EXPECT_EQ(group("layers.1.layers.0.weight"), 64);
  EXPECT_EQ(group("layers.2.layers.1.layers.0.weight"), 128);
  EXPECT_EQ(group("layers.5.layers.3.layers.1.layers.0.weight"), 256);
  EXPECT_EQ(group("layers.6.layers.1.layers.0.weight"), 512);
  EXPECT_EQ(group("features.layers.0.layers.0.weight"), 512);
  for (const auto& node : g.node())
    if (node.op_type() == "Gemm") EXPECT_EQ(node.input_size(), 2) << "Linear(bias=False)";

  std::map<std::string, Shape> initializers;
  for (const auto& t : g.initializer())
    initializers[t.name()] = Shape(t.dims().begin(), t.dims().end());
  EXPECT_EQ(initializers.size(), model.parameters().size() + model.buffers().size());
  EXPECT_EQ(initializers["layers.2.layers.1.layers.0.weight"], (Shape{128, 1, 3, 3}));
  EXPECT_EQ(initializers["features.layers.0.layers.0.weight"], (Shape{512, 1, 7, 7}));
  EXPECT_EQ(initializers["features.layers.2.weight"], (Shape{512, 512}));
}

}  // namespace
}  // namespace pfc
