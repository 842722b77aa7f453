// Reading a backbone out of an ONNX model by its graph: pfc export's own models read back as
// the same tensors (an iresnet, MobileFaceNet and a Vision Transformer, whose mask_token no
// inference graph holds: it comes back as zeros), a model rewritten as torch.onnx writes one
// (every batch norm after a convolution folded into it, the weights renamed, the Linear as a
// MatMul of the transposed weight plus an Add) computes the same embeddings once read, and
// another network, an extra node, another head count or a file that is not ONNX is refused
// naming the tensor or node.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "config/config.h"
#include "core/error.h"
#include "eval/onnx_backbone_reader.h"
#include "export/onnx_export.h"
#include "model/backbone_state.h"
#include "model/make_backbone.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

Config tiny_iresnet(std::vector<std::int64_t> widths = {4, 8, 8, 16}) {
  Config cfg;
  cfg.network = "custom";
  cfg.layers = {1, 2, 1, 1};
  cfg.widths = std::move(widths);
  cfg.image_size = 32;
  cfg.embedding_size = 8;
  return cfg;
}

// 4 tokens of 8 in 2 heads.
Config tiny_vit(std::int64_t heads = 2) {
  Config cfg;
  cfg.network = "vit";
  cfg.image_size = 18;
  cfg.embed_dim = 8;
  cfg.depth = 2;
  cfg.num_heads = heads;
  cfg.embedding_size = 8;
  return cfg;
}

// A network whose every tensor is random, batch norms included (variances positive), as a
// trained one's are: a tensor read into the wrong place shows.
std::unique_ptr<Backbone> random_network(const Config& cfg, Backend& backend, unsigned seed) {
  std::unique_ptr<Backbone> net = make_backbone(cfg, backend, DType::f32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Parameter* p : net->parameters()) {
    Tensor t = Tensor::host(p->torch_shape, DType::f32);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng) * 0.5f;
    net->import_parameter(p->name, t);
  }
  for (const Buffer* b : net->buffers()) {
    Tensor t = Tensor::host(b->value.shape(), DType::f32);
    const bool var = b->name.ends_with("running_var");
    for (std::int64_t i = 0; i < t.numel(); ++i)
      t.data<float>()[i] = var ? 0.5f + std::abs(u(rng)) : u(rng) * 0.2f;
    net->import_buffer(b->name, t);
  }
  net->refresh_working_copies();
  return net;
}

onnx::ModelProto export_model(const Backbone& net) {
  OnnxExportSource source;
  source.graph_name = "test";
  source.image_size = net.image_size();
  source.embedding_size = net.embedding_size();
  source.trace = [&](InferenceGraph& g, GraphValue images) { return net.trace(g, images); };
  return build_onnx_model(source);
}

std::string save(const onnx::ModelProto& model, const std::string& name) {
  const std::string path = test::scratch_dir("onnx_reader") + "/" + name;
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
  return path;
}

const onnx::TensorProto& initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const onnx::TensorProto& t : g.initializer())
    if (t.name() == name) return t;
  throw Error("no initializer " + name);
}

std::vector<float> floats(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / 4);
  std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
  return v;
}

void add_floats(onnx::GraphProto& g, const std::string& name, const std::vector<std::int64_t>& dims,
                const std::vector<float>& values) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (const std::int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * 4);
}

// What torch.onnx.export does to a model in inference mode: each BatchNormalization right
// after a Conv becomes that Conv's weight scale and bias, under a new name; a Gemm becomes a
// MatMul with the weight transposed, and an Add of the bias.
onnx::ModelProto as_torch_writes_it(onnx::ModelProto model) {
  onnx::GraphProto& g = *model.mutable_graph();
  std::map<std::string, int> producer, uses;
  for (int i = 0; i < g.node_size(); ++i) {
    producer[g.node(i).output(0)] = i;
    for (const std::string& in : g.node(i).input()) ++uses[in];
  }
  std::map<std::string, std::string> renamed;  // BN output -> Conv output
  std::vector<onnx::NodeProto> kept;
  int counter = 100;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto node = g.node(i);
    for (int k = 0; k < node.input_size(); ++k)
      if (renamed.count(node.input(k))) node.set_input(k, renamed[node.input(k)]);
    const auto conv = node.input_size() ? producer.find(node.input(0)) : producer.end();
    if (node.op_type() == "BatchNormalization" && conv != producer.end() &&
        g.node(conv->second).op_type() == "Conv" && uses[node.input(0)] == 1) {
      const std::vector<float> gamma = floats(initializer(g, node.input(1)));
      const std::vector<float> beta = floats(initializer(g, node.input(2)));
      const std::vector<float> mean = floats(initializer(g, node.input(3)));
      const std::vector<float> var = floats(initializer(g, node.input(4)));
      onnx::NodeProto& c = kept.back();  // the Conv, just kept
      const onnx::TensorProto& w = initializer(g, c.input(1));
      std::vector<float> weight = floats(w);
      const std::size_t per_out = weight.size() / gamma.size();
      std::vector<float> bias(gamma.size());
      for (std::size_t o = 0; o < gamma.size(); ++o) {
        const float s = gamma[o] / std::sqrt(var[o] + 1e-5f);
        for (std::size_t k = 0; k < per_out; ++k) weight[o * per_out + k] *= s;
        bias[o] = beta[o] - mean[o] * s;
      }
      const std::string wname = "onnx::Conv_" + std::to_string(counter++);
      const std::string bname = "onnx::Conv_" + std::to_string(counter++);
      add_floats(g, wname, {w.dims().begin(), w.dims().end()}, weight);
      add_floats(g, bname, {static_cast<std::int64_t>(bias.size())}, bias);
      c.set_input(1, wname);
      c.add_input(bname);
      renamed[node.output(0)] = c.output(0);
      continue;
    }
    if (node.op_type() == "Gemm") {
      const onnx::TensorProto& w = initializer(g, node.input(1));
      const std::int64_t out = w.dims(0), in = w.dims(1);
      const std::vector<float> weight = floats(w);
      std::vector<float> t(weight.size());
      for (std::int64_t o = 0; o < out; ++o)
        for (std::int64_t k = 0; k < in; ++k) t[k * out + o] = weight[o * in + k];
      const std::string transposed = "onnx::MatMul_" + std::to_string(counter++);
      add_floats(g, transposed, {in, out}, t);
      onnx::NodeProto matmul;
      matmul.set_op_type("MatMul");
      matmul.set_name("/fc/MatMul");
      matmul.add_input(node.input(0));
      matmul.add_input(transposed);
      matmul.add_output(node.input_size() < 3 ? node.output(0) : "/fc/MatMul_output_0");
      kept.push_back(matmul);
      if (node.input_size() < 3) continue;  // Linear(bias=False)
      onnx::NodeProto add;
      add.set_op_type("Add");
      add.set_name("/fc/Add");
      add.add_input(node.input(2));
      add.add_input("/fc/MatMul_output_0");
      add.add_output(node.output(0));
      kept.push_back(add);
      continue;
    }
    kept.push_back(node);
  }
  g.clear_node();
  for (const onnx::NodeProto& node : kept) *g.add_node() = node;
  for (int i = 0; i < g.output_size(); ++i)
    if (renamed.count(g.output(i).name()))
      g.mutable_output(i)->set_name(renamed[g.output(i).name()]);
  return model;
}

Tensor embed(Backbone& net, const Tensor& images) {
  return net.backend().to_host(net.forward(images, ForwardMode::inference));
}

Tensor random_images(std::int64_t n, std::int64_t size) {
  Tensor t = Tensor::host({n, size, size, 3}, DType::f32);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

double relative_l2(const Tensor& a, const Tensor& b) {
  double d = 0, n = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    d += std::pow(a.data<float>()[i] - b.data<float>()[i], 2);
    n += std::pow(b.data<float>()[i], 2);
  }
  return std::sqrt(d / n);
}

void load(Backbone& net, const OnnxBackbone& read) {
  std::vector<NamedTensor> parameters, buffers;
  for (const NamedTensor& t : read.tensors)
    (net.find_buffer(t.name) ? buffers : parameters).push_back(t);
  load_backbone_state(net, parameters, buffers, "test");
}

std::string error_of(const std::string& path, const Backbone& net) {
  try {
    read_onnx_backbone(path, net);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

class OnnxBackboneReader : public ::testing::TestWithParam<const char*> {
 protected:
  Config config() const {
    if (std::string(GetParam()) == "iresnet") return tiny_iresnet();
    Config cfg;
    cfg.network = GetParam();
    cfg.embedding_size = 8;
    if (cfg.network == "vit") return tiny_vit();
    return cfg;
  }
  CpuBackend backend_;
};

TEST_P(OnnxBackboneReader, ReadsPfcExportsBackExactly) {
  const Config cfg = config();
  const auto source = random_network(cfg, backend_, 1);
  const std::string path = save(export_model(*source), "pfc.onnx");
  const auto target = make_backbone(cfg, backend_, DType::f32);
  const OnnxBackbone read = read_onnx_backbone(path, *target);
  EXPECT_EQ(read.folded_batch_norms, 0);
  EXPECT_EQ(read.tensors.size(), source->parameters().size() + source->buffers().size());
  const std::vector<std::string> untraced =
      cfg.network == "vit" ? std::vector<std::string>{"mask_token"} : std::vector<std::string>{};
  EXPECT_EQ(read.untraced, untraced);
  for (const NamedTensor& t : read.tensors) {
    if (t.name == "mask_token") {
      for (std::int64_t i = 0; i < t.value.numel(); ++i) EXPECT_EQ(t.value.data<float>()[i], 0);
      continue;
    }
    const Parameter* p = source->find_parameter(t.name);
    const Tensor expected = p ? source->export_parameter(*p)
                              : backend_.to_host(source->find_buffer(t.name)->value);
    ASSERT_EQ(t.value.shape(), expected.shape()) << t.name;
    EXPECT_EQ(std::memcmp(t.value.raw(), expected.raw(), t.value.bytes()), 0) << t.name;
  }
}

TEST_P(OnnxBackboneReader, ReadsATorchStyleExportAsTheSameFunction) {
  const Config cfg = config();
  const auto source = random_network(cfg, backend_, 2);
  const onnx::ModelProto model = as_torch_writes_it(export_model(*source));
  const std::string path = save(model, "torch.onnx");
  const auto target = make_backbone(cfg, backend_, DType::f32);
  const OnnxBackbone read = read_onnx_backbone(path, *target);
  // The ViT's batch norms follow Linears, which torch.onnx does not fold.
  EXPECT_EQ(read.folded_batch_norms > 0, cfg.network != "vit");
  load(*target, read);
  const Tensor images = random_images(2, cfg.image_size);
  const Tensor theirs = embed(*source, images), ours = embed(*target, images);
  EXPECT_LT(relative_l2(ours, theirs), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Networks, OnnxBackboneReader,
                         ::testing::Values("iresnet", "mbf", "vit"));

// The head count shows in no tensor's shape: the attention's Reshape tells it.
TEST(OnnxBackboneReaderRefusals, AnotherHeadCountIsRefusedNamingTheReshape) {
  CpuBackend backend;
  const auto source = random_network(tiny_vit(2), backend, 1);
  const std::string path = save(export_model(*source), "vit.onnx");
  const std::string why = error_of(path, *make_backbone(tiny_vit(4), backend, DType::f32));
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("Reshape 'blocks.0.attn.split'"), std::string::npos) << why;
  EXPECT_NE(why.find("[0, 4, 3, 2, 4]"), std::string::npos) << why;
  EXPECT_NE(why.find("[N, T, 3, 4, 2]"), std::string::npos) << why;
}

// A node on the data that no layer accounts for is refused, even of a kind that also computes
// the shapes a Reshape takes (which need no counterpart).
TEST(OnnxBackboneReaderRefusals, AStrayCastOnTheDataIsRefused) {
  CpuBackend backend;
  const auto source = random_network(tiny_vit(), backend, 1);
  onnx::ModelProto model = export_model(*source);
  onnx::NodeProto* cast = model.mutable_graph()->add_node();
  cast->set_op_type("Cast");
  cast->set_name("stray");
  cast->add_input("norm");
  cast->add_output("stray_out");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::DOUBLE);
  const std::string why =
      error_of(save(model, "stray.onnx"), *make_backbone(tiny_vit(), backend, DType::f32));
  EXPECT_NE(why.find("a Cast node 'stray' (on 'norm')"), std::string::npos) << why;
}

TEST(OnnxBackboneReaderRefusals, NameTheNetworksFirstTensorWithoutACounterpart) {
  CpuBackend backend;
  const auto source = random_network(tiny_iresnet(), backend, 1);
  const std::string path = save(export_model(*source), "a.onnx");
  const auto wider = make_backbone(tiny_iresnet({4, 8, 16, 16}), backend, DType::f32);
  std::string why = error_of(path, *wider);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("'layer3.0.conv1.weight' [16, 8, 3, 3]"), std::string::npos) << why;

  Config embedding = tiny_iresnet();
  embedding.embedding_size = 16;
  why = error_of(path, *make_backbone(embedding, backend, DType::f32));
  EXPECT_NE(why.find("'fc.weight' [16, 64]"), std::string::npos) << why;

  Config mbf;
  mbf.network = "mbf";
  mbf.embedding_size = 8;
  why = error_of(path, *make_backbone(mbf, backend, DType::f32));
  EXPECT_NE(why.find("layers.0.layers.0.weight"), std::string::npos) << why;

  // An activation the network lacks, between its first convolution and batch norm.
  onnx::ModelProto model = export_model(*source);
  onnx::GraphProto& g = *model.mutable_graph();
  const std::string conv_out = g.node(0).output(0);
  g.mutable_node(0)->set_output(0, "relu_in");
  onnx::NodeProto* relu = g.add_node();
  relu->set_op_type("Relu");
  relu->set_name("extra");
  relu->add_input("relu_in");
  relu->add_output(conv_out);
  why = error_of(save(model, "relu.onnx"), *make_backbone(tiny_iresnet(), backend, DType::f32));
  EXPECT_NE(why.find("'bn1.running_mean'"), std::string::npos) << why;
  EXPECT_NE(why.find("Relu 'extra'"), std::string::npos) << why;

  const std::string text = test::scratch_dir("onnx_reader_text") + "/x.onnx";
  std::ofstream(text) << "not a model at all";
  EXPECT_NE(error_of(text, *wider).find("is not an ONNX model"), std::string::npos);
}

onnx::NodeProto identity(const std::string& name, const std::string& in,
                         const std::string& out) {
  onnx::NodeProto node;
  node.set_op_type("Identity");
  node.set_name(name);
  node.add_input(in);
  node.add_output(out);
  return node;
}

// Identity nodes that feed each other made the reader follow them forever; a chain of them off
// the data path is read (its aliases resolved once each).
TEST(OnnxBackboneReaderRefusals, IdentityCyclesAreRefusedNamingTheirNodes) {
  CpuBackend backend;
  const auto source = random_network(tiny_iresnet(), backend, 1);
  const auto net = make_backbone(tiny_iresnet(), backend, DType::f32);
  for (const bool self : {false, true}) {
    onnx::ModelProto model = export_model(*source);
    onnx::GraphProto& g = *model.mutable_graph();
    if (self) {
      *g.add_node() = identity("self_loop", "v", "v");
    } else {
      *g.add_node() = identity("loop_a", "x", "y");
      *g.add_node() = identity("loop_b", "y", "x");
    }
    const std::string path = save(model, self ? "self_loop.onnx" : "loop.onnx");
    const std::string why = error_of(path, *net);
    EXPECT_NE(why.find(path), std::string::npos) << why;
    EXPECT_NE(why.find("feed each other in a cycle"), std::string::npos) << why;
    EXPECT_NE(why.find(self ? "Identity 'self_loop'" : "Identity 'loop_"), std::string::npos)
        << why;
  }
  onnx::ModelProto model = export_model(*source);
  onnx::GraphProto& g = *model.mutable_graph();
  for (int i = 0; i < 30000; ++i)
    *g.add_node() = identity(fmt::format("chain_{}", i),
                             i == 0 ? std::string(kOnnxInputName) : fmt::format("c{}", i - 1),
                             fmt::format("c{}", i));
  EXPECT_EQ(read_onnx_backbone(save(model, "chain.onnx"), *net).tensors.size(),
            net->parameters().size() + net->buffers().size());
}

// Dimensions from the file: a count beyond 64 bits is a refusal naming the file, and a shape of
// 100000 dimensions is named in a message of a line, not 300 KB.
TEST(OnnxBackboneReaderRefusals, ShapesFromTheFileAreCheckedAndNamedBriefly) {
  CpuBackend backend;
  const auto source = random_network(tiny_iresnet(), backend, 1);
  const auto net = make_backbone(tiny_iresnet(), backend, DType::f32);
  const auto with_dims = [&](const std::string& op, std::vector<std::int64_t> dims,
                             const std::string& name) {
    onnx::ModelProto model = export_model(*source);
    onnx::GraphProto& g = *model.mutable_graph();
    std::string weight;
    for (const onnx::NodeProto& node : g.node())
      if (node.op_type() == op && weight.empty()) weight = node.input(1);
    for (onnx::TensorProto& t : *g.mutable_initializer())
      if (t.name() == weight) {
        t.clear_dims();
        for (const std::int64_t d : dims) t.add_dims(d);
      }
    return save(model, name);
  };
  const std::string overflow =
      with_dims("PRelu", {std::int64_t{1} << 40, std::int64_t{1} << 40}, "overflow.onnx");
  std::string why = error_of(overflow, *net);
  EXPECT_NE(why.find(overflow), std::string::npos) << why;
  EXPECT_NE(why.find("not a 64-bit count"), std::string::npos) << why;
  const std::string many = with_dims("Conv", std::vector<std::int64_t>(100000, 1), "many.onnx");
  why = error_of(many, *net);
  EXPECT_NE(why.find(many), std::string::npos) << why;
  EXPECT_NE(why.find("100000 dimensions in all"), std::string::npos) << why.substr(0, 400);
  EXPECT_LT(why.size(), 2000u);
}

}  // namespace
}  // namespace pfc
