// The ONNX model pfc writes, read back with onnx's own protobuf classes: torch2onnx.py's
// interface (input `data` [None, 3, 112, 112] float32, one output [None, emb], opset 11),
// one node per layer with the layer's state_dict name, every weight an initializer equal to
// the network's tensor in PyTorch layout; and what is refused: a network with non-finite
// weights, a model over 2 GiB, a folder that does not exist - with nothing left behind.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/golden_backbone.h"
#include "backend/cpu/cpu_backend.h"
#include "export/onnx_export.h"
#include "support/test_paths.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

class OnnxModel : public ::testing::Test {
 protected:
  void SetUp() override {
    network_ = file_.network("tiny");
    model_ = golden_backbone(file_, network_, backend_, DType::f32);
  }

  OnnxExportSource source() const {
    OnnxExportSource s;
    s.graph_name = "tiny";
    s.image_size = network_.image_size;
    s.embedding_size = network_.embedding_size;
    s.trace = [this](InferenceGraph& graph, GraphValue images) {
      return model_->trace(graph, images);
    };
    s.metadata = {{"network", "tiny"}};
    return s;
  }

  static std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  GoldenFile file_{test::golden_path()};
  GoldenNetwork network_;
  CpuBackend backend_;
  std::unique_ptr<Backbone> model_;
};

void expect_shape(const onnx::ValueInfoProto& info, const std::vector<std::string>& dims) {
  const auto& type = info.type().tensor_type();
  EXPECT_EQ(type.elem_type(), onnx::TensorProto::FLOAT) << info.name();
  ASSERT_EQ(type.shape().dim_size(), static_cast<int>(dims.size())) << info.name();
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    EXPECT_EQ(dim.has_dim_param() ? dim.dim_param() : std::to_string(dim.dim_value()), dims[d])
        << info.name() << " dimension " << d;
  }
}

TEST_F(OnnxModel, HasTorch2onnxInterfaceAndOneNodePerLayer) {
  const onnx::ModelProto model = build_onnx_model(source());
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 11);
  EXPECT_EQ(model.producer_name(), "pfc");
  const onnx::GraphProto& g = model.graph();
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "data");
  expect_shape(g.input(0), {"None", "3", "112", "112"});
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "embedding");
  expect_shape(g.output(0), {"None", "128"});

  std::map<std::string, int> ops;
  for (const auto& node : g.node()) ++ops[node.op_type()];
  // tiny: stages [2, 2, 2, 1] of IBasicBlock; each first block has a downsample.
  const int blocks = 7, downsamples = 4;
  EXPECT_EQ(ops["Conv"], 1 + 2 * blocks + downsamples);
  EXPECT_EQ(ops["BatchNormalization"], 1 + 3 * blocks + downsamples + 2);
  EXPECT_EQ(ops["PRelu"], 1 + blocks);
  EXPECT_EQ(ops["Add"], blocks);
  EXPECT_EQ(ops["Flatten"], 1);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_EQ(ops["Unsqueeze"], 1);  // BatchNorm1d `features` runs on [N, C, 1]
  EXPECT_EQ(ops["Squeeze"], 1);
  EXPECT_EQ(g.node_size(), 1 + 2 * blocks + downsamples + 1 + 3 * blocks + downsamples + 2 + 1 +
                               blocks + blocks + 1 + 1 + 1 + 1);
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_EQ(model.metadata_props(0).value(), "tiny");
}

TEST_F(OnnxModel, InitializersAreTheNetworksTensorsInPytorchLayout) {
  const onnx::ModelProto model = build_onnx_model(source());
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : model.graph().initializer()) initializers[t.name()] = &t;
  EXPECT_EQ(initializers.size(), model_->parameters().size() + model_->buffers().size());
  for (const Parameter* p : model_->parameters()) {
    ASSERT_TRUE(initializers.count(p->name)) << p->name;
    const onnx::TensorProto& t = *initializers[p->name];
    const Tensor expected = model_->export_parameter(*p);
    ASSERT_EQ(t.raw_data().size(), expected.bytes()) << p->name;
    EXPECT_EQ(std::memcmp(t.raw_data().data(), expected.raw(), expected.bytes()), 0) << p->name;
  }
  // The file's own values, by the fill rule: the conv weight is OIHW, fc's columns NCHW.
  for (const std::string name : {"layer2.0.conv2.weight", "fc.weight"}) {
    const Tensor golden = file_.parameter("tiny", name);
    const onnx::TensorProto& t = *initializers[name];
    EXPECT_EQ(Shape(t.dims().begin(), t.dims().end()), golden.shape()) << name;
    EXPECT_EQ(std::memcmp(t.raw_data().data(), golden.raw(), golden.bytes()), 0) << name;
  }
  // PRelu's slope broadcasts over [N, C, H, W] as [C, 1, 1].
  const onnx::TensorProto& slope = *initializers["prelu.weight"];
  EXPECT_EQ(Shape(slope.dims().begin(), slope.dims().end()), (Shape{64, 1, 1}));
}

TEST_F(OnnxModel, WrittenFileReadsBackAsTheModel) {
  const std::string dir = test::scratch_dir("onnx_write");
  const std::string path = dir + "/tiny.onnx";
  const onnx::ModelProto model = build_onnx_model(source());
  write_onnx_model(model, path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(read_file(path)));
  EXPECT_EQ(back.SerializeAsString(), model.SerializeAsString());
}

TEST_F(OnnxModel, NonFiniteWeightsAreRefusedAndAnEarlierFileKept) {
  const std::string dir = test::scratch_dir("onnx_nan");
  const std::string path = dir + "/tiny.onnx";
  write_onnx_model(build_onnx_model(source()), path);
  const std::string before = read_file(path);

  Parameter& w = *model_->find_parameter("layer3.1.conv1.weight");
  Tensor host = backend_.to_host(w.value);
  host.data<float>()[17] = std::nanf("");
  host.data<float>()[18] = INFINITY;
  backend_.copy(host, w.value);
  const std::string message =
      test::usage_error([&] { write_onnx_model(build_onnx_model(source()), path); });
  EXPECT_NE(message.find("layer3.1.conv1.weight holds 2 non-finite values"), std::string::npos)
      << message;
  EXPECT_EQ(read_file(path), before);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(OnnxModel, ModelsOverTwoGibibytesAreRefused) {
  check_onnx_size(static_cast<std::size_t>(INT_MAX));
  const std::string message =
      test::usage_error([] { check_onnx_size(static_cast<std::size_t>(INT_MAX) + 1); });
  EXPECT_NE(message.find("over the 2 GiB"), std::string::npos) << message;
}

TEST_F(OnnxModel, MissingFolderIsAnErrorAndLeavesNothing) {
  const std::string dir = test::scratch_dir("onnx_missing");
  const std::string path = dir + "/no/such/folder/tiny.onnx";
  EXPECT_THROW(write_onnx_model(build_onnx_model(source()), path), Error);
  EXPECT_FALSE(fs::exists(dir + "/no"));
}

}  // namespace
}  // namespace pfc
