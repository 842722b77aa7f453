// A Vision Transformer as an ONNX model (the checker and strict shape inference run inside
// build_onnx_model), node for node as torch.onnx writes vit.py at opset 11: the patch Conv with
// its bias, tokens as Reshape and Transpose, LayerNorm decomposed (opset 11 has no op for it),
// the attention's Reshape, Transpose, Gathers, MatMuls, scale and Softmax, Linears on tokens as
// MatMul by the transposed weight, ReLU6 as Clip(0, 6). onnxruntime's embeddings against
// PyTorch's are tests/integration/import_torch.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "backend/cpu/cpu_backend.h"
#include "export/onnx_export.h"
#include "model/vision_transformer.h"

namespace pfc {
namespace {

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<std::int64_t> ints(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* a = attribute(node, name);
  if (a == nullptr) return {};
  if (a->type() == onnx::AttributeProto::INT) return {a->i()};
  return {a->ints().begin(), a->ints().end()};
}

TEST(OnnxVisionTransformer, WritesWhatTorchOnnxWritesAtOpset11) {
  CpuBackend backend;
  VisionTransformerOptions options;
  options.image_size = 18;  // 2 x 2 patches of 9: 4 tokens
  options.embed_dim = 8;
  options.depth = 2;
  options.num_heads = 2;
  options.embedding_size = 4;
  VisionTransformer model(backend, options);
  model.initialize(5);
  OnnxExportSource source;
  source.graph_name = "vit";
  source.image_size = options.image_size;
  source.embedding_size = options.embedding_size;
  source.trace = [&](InferenceGraph& graph, GraphValue images) {
    return model.trace(graph, images);
  };
  const onnx::ModelProto onnx_model = build_onnx_model(source);
  const onnx::GraphProto& g = onnx_model.graph();

  std::map<std::string, int> ops;
  std::map<std::string, const onnx::NodeProto*> by_name, constants;
  for (const auto& node : g.node()) {
    ++ops[node.op_type()];
    by_name[node.name()] = &node;
    if (node.op_type() == "Constant") constants[node.output(0)] = &node;
  }
  const int depth = 2, norms = 2 * depth + 1;
  EXPECT_EQ(ops["Conv"], 1);
  EXPECT_EQ(ops["ReduceMean"], 2 * norms);
  for (const char* op : {"Sub", "Pow", "Sqrt", "Div"}) EXPECT_EQ(ops[op], norms) << op;
  EXPECT_EQ(ops["Mul"], norms + depth);  // each norm's scale, each attention's 1/sqrt(d)
  // Per norm eps and shift; per block proj, fc1 and fc2's biases and two residuals; pos_embed.
  EXPECT_EQ(ops["Add"], 2 * norms + 5 * depth + 1);
  EXPECT_EQ(ops["MatMul"], 6 * depth);  // qkv, proj, fc1, fc2, q kᵀ, · v
  EXPECT_EQ(ops["Reshape"], 1 + 2 * depth);
  EXPECT_EQ(ops["Transpose"], 1 + 3 * depth);
  EXPECT_EQ(ops["Gather"], 3 * depth);
  EXPECT_EQ(ops["Softmax"], depth);
  EXPECT_EQ(ops["Clip"], depth);
  EXPECT_EQ(ops["Flatten"], 1);
  EXPECT_EQ(ops["Gemm"], 2);  // feature.0 and feature.2, without bias
  EXPECT_EQ(ops["BatchNormalization"], 2);

  for (const auto& node : g.node()) {
    if (node.op_type() == "Conv") {
      ASSERT_EQ(node.input_size(), 3);
      EXPECT_EQ(node.input(2), "patch_embed.proj.bias");
      EXPECT_EQ(ints(node, "strides"), (std::vector<std::int64_t>{9, 9}));
    }
    if (node.op_type() == "Softmax") EXPECT_EQ(ints(node, "axis"), std::vector<std::int64_t>{-1});
    if (node.op_type() == "ReduceMean")
      EXPECT_EQ(ints(node, "axes"), std::vector<std::int64_t>{-1});
    if (node.op_type() == "Gemm") EXPECT_EQ(node.input_size(), 2) << "Linear(bias=False)";
  }
  const auto constant = [&](const std::string& name) -> const onnx::TensorProto& {
    return attribute(*constants.at(name), "value")->t();
  };
  const onnx::NodeProto& split = *by_name.at("blocks.0.attn.split");
  const onnx::TensorProto& target = constant(split.input(1));
  EXPECT_EQ(std::vector<std::int64_t>(target.int64_data().begin(), target.int64_data().end()),
            (std::vector<std::int64_t>{0, 4, 3, 2, 4}));
  EXPECT_EQ(ints(*by_name.at("blocks.0.attn.parts"), "perm"),
            (std::vector<std::int64_t>{2, 0, 3, 1, 4}));
  const std::map<std::string, std::int64_t> parts{{"q", 0}, {"k", 1}, {"v", 2}};
  for (const auto& [part, index] : parts) {
    const onnx::NodeProto& gather = *by_name.at("blocks.1.attn." + part);
    EXPECT_EQ(ints(gather, "axis"), std::vector<std::int64_t>{0});
    EXPECT_EQ(constant(gather.input(1)).int64_data(0), index) << part;
  }
  EXPECT_FLOAT_EQ(constant(by_name.at("blocks.0.attn.scaled")->input(1)).float_data(0),
                  static_cast<float>(1 / std::sqrt(4.0)));
  const onnx::NodeProto& clip = *by_name.at("blocks.0.mlp.fc1.relu6");
  EXPECT_EQ(constant(clip.input(1)).float_data(0), 0.0f);
  EXPECT_EQ(constant(clip.input(2)).float_data(0), 6.0f);
  EXPECT_FLOAT_EQ(constant(by_name.at("norm.variance_eps")->input(1)).float_data(0), 1e-5f);

  // Every tensor but mask_token (only training's masking reads it) under its state_dict name;
  // the token Linears' weights transposed, as torch.onnx folds them, beside their name.
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : g.initializer()) initializers[t.name()] = &t;
  EXPECT_EQ(initializers.size(), model.parameters().size() + model.buffers().size() - 1);
  EXPECT_EQ(initializers.count("mask_token"), 0u);
  const onnx::TensorProto& qkv = *initializers.at("blocks.0.attn.qkv.weight.T");
  EXPECT_EQ(Shape(qkv.dims().begin(), qkv.dims().end()), (Shape{8, 24}));
  const Tensor weight = model.export_parameter(*model.find_parameter("blocks.0.attn.qkv.weight"));
  std::vector<float> values(qkv.raw_data().size() / 4);
  std::memcpy(values.data(), qkv.raw_data().data(), qkv.raw_data().size());
  for (std::int64_t o = 0; o < 24; ++o)
    for (std::int64_t i = 0; i < 8; ++i)
      ASSERT_EQ(values[i * 24 + o], weight.data<float>()[o * 8 + i]) << o << ", " << i;
  const onnx::TensorProto& pos = *initializers.at("pos_embed");
  EXPECT_EQ(Shape(pos.dims().begin(), pos.dims().end()), (Shape{1, 4, 8}));
  EXPECT_EQ(initializers.count("feature.0.weight"), 1u);
}

}  // namespace
}  // namespace pfc
