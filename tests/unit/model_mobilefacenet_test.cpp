// MobileFaceNet (get_mbf): its state_dict names and shapes are exactly arcface_torch's (read
// from the parity golden file, which arcface_torch wrote), its initialisation is
// kaiming_normal_(fan_out) / batch-norm 1, 0 / PReLU 0.25, an image size other than 112 is
// refused, and a training pass fills every gradient. The blocks' backward passes against
// finite differences are in model_mobilefacenet_blocks_test.cpp; the values against
// arcface_torch's in `pfc golden ... --case mbf/arcface_sr1`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "backend/cpu/cpu_backend.h"
#include "io/golden_file.h"
#include "model/mobilefacenet.h"
#include "support/gradient_checker.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

TEST(MobileFaceNet, StateDictIsArcfaceTorchs) {
  CpuBackend backend;
  MobileFaceNet model(backend, {});
  const GoldenFile file(test::parity_golden_path());

  std::map<std::string, Shape> ours;
  for (const Parameter* p : model.parameters()) ours[p->name] = p->torch_shape;
  std::map<std::string, Shape> theirs;
  for (const std::string& name : file.parameter_names("mbf")) {
    const auto shape = h5::read_attribute_ints(file.file_id(), "mbf/params/" + name, "shape");
    theirs[name] = Shape(shape.begin(), shape.end());
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours.size(), model.parameters().size()) << "a name is used twice";

  std::set<std::string> buffers;
  for (const Buffer* b : model.buffers()) buffers.insert(b->name);
  const std::vector<std::string> stats = file.list("mbf/arcface_sr1/running_stats");
  EXPECT_EQ(buffers, std::set<std::string>(stats.begin(), stats.end()));

  // PyTorch's module order, which checkpoints and exports follow.
  EXPECT_EQ(model.parameters().front()->name, "layers.0.layers.0.weight");
  EXPECT_EQ(model.parameters()[4]->name, "layers.1.layers.0.weight");
  EXPECT_EQ(model.parameters().back()->name, "features.layers.3.bias");
}

TEST(MobileFaceNet, InitialisesAsArcfaceTorch) {
  CpuBackend backend;
  MobileFaceNet model(backend, {});
  model.initialize(7);
  for (const Parameter* p : model.parameters()) {
    const Tensor& v = p->value;
    const float* x = v.data<float>();
    if (p->layout == TorchLayout::same) {
      const bool prelu = p->name.ends_with(".layers.2.weight");
      const float want = prelu ? 0.25f : (p->name.ends_with(".weight") ? 1.0f : 0.0f);
      for (std::int64_t i = 0; i < v.numel(); ++i) ASSERT_EQ(x[i], want) << p->name;
      continue;
    }
    const Shape& t = p->torch_shape;
    const double fan_out = t.size() == 4 ? static_cast<double>(t[0] * t[2] * t[3]) : t[0];
    double sum = 0, squares = 0;
    for (std::int64_t i = 0; i < v.numel(); ++i) {
      sum += x[i];
      squares += static_cast<double>(x[i]) * x[i];
    }
    const double n = static_cast<double>(v.numel());
    const double stddev = std::sqrt(squares / n - (sum / n) * (sum / n));
    // Sampling error of a standard deviation: about 1 / sqrt(2n) relative.
    EXPECT_NEAR(stddev / std::sqrt(2.0 / fan_out), 1.0, 5.0 / std::sqrt(2.0 * n)) << p->name;
  }
  for (const Buffer* b : model.buffers()) {
    const float want = b->name.ends_with("running_var") ? 1.0f : 0.0f;
    for (std::int64_t i = 0; i < b->value.numel(); ++i)
      ASSERT_EQ(b->value.data<float>()[i], want) << b->name;
  }

  MobileFaceNet again(backend, {}), other(backend, {});
  again.initialize(7);
  other.initialize(8);
  const Tensor& w = model.parameters()[0]->value;
  EXPECT_EQ(std::memcmp(w.raw(), again.parameters()[0]->value.raw(), w.bytes()), 0);
  EXPECT_NE(std::memcmp(w.raw(), other.parameters()[0]->value.raw(), w.bytes()), 0);
}

// An f64 run is f64 throughout, the head included; in fp16 mode the head (conv_sep and
// features) has no f16 working copies: it computes on its f32 masters, as arcface_torch does.
TEST(MobileFaceNet, MasterAndHeadTypes) {
  CpuBackend backend;
  MobileFaceNetOptions options;
  options.precision = DType::f64;
  MobileFaceNet model(backend, options);
  for (const Parameter* p : model.parameters()) {
    EXPECT_EQ(p->value.dtype(), DType::f64) << p->name;
    EXPECT_EQ(p->grad.dtype(), DType::f64) << p->name;
    EXPECT_FALSE(p->working.defined()) << p->name;
  }
  for (const Buffer* b : model.buffers()) EXPECT_EQ(b->value.dtype(), DType::f64) << b->name;

  options.precision = DType::f16;
  MobileFaceNet mixed(backend, options);
  for (const Parameter* p : mixed.parameters()) {
    EXPECT_EQ(p->value.dtype(), DType::f32) << p->name;
    const bool head = p->name.starts_with("conv_sep.") || p->name.starts_with("features.");
    const bool conv = p->layout == TorchLayout::conv_oihw;
    EXPECT_EQ(p->working.defined(), conv && !head) << p->name;
  }
}

// get_mbf_large: blocks (2, 8, 12, 4), scale 4. layers.1 is then a Residual stage (of two
// DepthWise units 256 -> 128 -> 256) instead of the 64-group ConvBlock.
TEST(MobileFaceNet, LargeHasAResidualFirstStageAndFourfoldChannels) {
  CpuBackend backend;
  MobileFaceNetOptions options;
  options.blocks = {2, 8, 12, 4};
  options.scale = 4;
  MobileFaceNet model(backend, options);
  std::map<std::string, Shape> shapes;
  for (const Parameter* p : model.parameters()) shapes[p->name] = p->torch_shape;
  EXPECT_EQ(shapes["layers.0.layers.0.weight"], (Shape{256, 3, 3, 3}));
  EXPECT_EQ(shapes.count("layers.1.layers.0.weight"), 0u);
  EXPECT_EQ(shapes["layers.1.layers.1.layers.0.layers.0.weight"], (Shape{128, 256, 1, 1}));
  EXPECT_EQ(shapes["layers.1.layers.1.layers.1.layers.0.weight"], (Shape{128, 1, 3, 3}));
  EXPECT_EQ(shapes["layers.4.layers.2.layers.0.weight"], (Shape{512, 256, 1, 1}));
  EXPECT_EQ(shapes.count("layers.7.layers.3.layers.2.layers.0.weight"), 1u);
  EXPECT_EQ(shapes.count("layers.7.layers.4.layers.0.layers.0.weight"), 0u);
  EXPECT_EQ(shapes["conv_sep.layers.0.weight"], (Shape{512, 512, 1, 1}));
  // Every unit: 3 convolutions, 3 batch-norms of 2 tensors, 2 PReLUs: 11 tensors; 2 + 1 + 8 +
  // 1 + 12 + 1 + 4 units, the stem, conv_sep (4 each) and the head (1 + 2 + 1 + 2).
  EXPECT_EQ(model.parameters().size(), 11u * 29 + 4 + 4 + 6);
}

TEST(MobileFaceNet, RefusesImagesOtherThan112) {
  CpuBackend backend;
  MobileFaceNetOptions options;
  options.image_size = 128;
  try {
    MobileFaceNet model(backend, options);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mbf needs 112x112 images"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("got image_size 128"), std::string::npos) << e.what();
  }
}

TEST(MobileFaceNet, TrainingPassFillsEveryGradient) {
  CpuBackend backend;
  MobileFaceNet model(backend, {});
  model.initialize(1);
  const Tensor images = test::random_uniform({2, 112, 112, 3}, DType::f32, 2);
  const Tensor embeddings = model.forward(images, ForwardMode::training);
  ASSERT_EQ(embeddings.shape(), (Shape{2, 512}));
  ASSERT_EQ(embeddings.dtype(), DType::f32);
  model.backward(test::random_uniform(embeddings.shape(), DType::f32, 3));
  // A shift followed by a training-mode batch-norm has a true gradient of 0 (the golden
  // file's exact_zero_grads); every weight has one that is not.
  for (const Parameter* p : model.parameters()) {
    EXPECT_TRUE(backend.all_finite(p->grad)) << p->name;
    if (p->name.ends_with(".weight")) EXPECT_GT(backend.sum_of_squares(p->grad), 0.0) << p->name;
  }
}

}  // namespace
}  // namespace pfc
