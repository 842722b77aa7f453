// The Vision Transformer (vit.py): its state_dict names and shapes are arcface_torch's (read from
// the golden file arcface_torch wrote), a training pass's gradients of every kind of parameter
// against finite differences in f64 with masking and DropPath on, activation checkpointing that
// changes no gradient, pfc's own random draws that depend on the sample's place in the global
// batch and not on the rank split, and the options a network cannot be built from refused by
// name. The values against arcface_torch's are `pfc golden` on arcface_torch_vit_f64.h5.
#include <gtest/gtest.h>

#include <map>

#include "backend/cpu/cpu_backend.h"
#include "io/golden_file.h"
#include "model/vision_transformer.h"
#include "support/gradient_checker.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

using test::random_uniform;

// 18x18 images: 2x2 patches of 9, so 4 tokens, 3 kept when masking.
VisionTransformerOptions tiny(bool checkpoint = false) {
  VisionTransformerOptions o;
  o.image_size = 18;
  o.embed_dim = 8;
  o.depth = 2;
  o.num_heads = 2;
  o.drop_path_rate = 0.5;
  o.mask_ratio = 0.1;
  o.checkpoint = checkpoint;
  o.embedding_size = 4;
  o.precision = DType::f64;
  return o;
}

// Sample 1 drops block 1's attention branch, sample 2 its MLP branch (block 0's rate is 0).
VitDraws fixed_draws() {
  VitDraws d;
  d.mask_noise = {0.5, 0.1, 0.9, 0.3, 0.2, 0.8, 0.4, 0.6, 0.7, 0.05, 0.15, 0.95};
  d.drop_path_keep = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0};
  return d;
}

TEST(VisionTransformer, StateDictIsArcfaceTorchs) {
  CpuBackend backend;
  VisionTransformerOptions o;  // vit_t's dimensions, as the golden file's group vit_t
  VisionTransformer model(backend, o);
  const GoldenFile file(test::vit_golden_path());
  std::map<std::string, Shape> ours, theirs;
  for (const Parameter* p : model.parameters()) ours[p->name] = p->torch_shape;
  for (const std::string& name : file.parameter_names("vit_t")) {
    const auto shape = h5::read_attribute_ints(file.file_id(), "vit_t/params/" + name, "shape");
    theirs[name] = Shape(shape.begin(), shape.end());
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours.size(), model.parameters().size()) << "a name is used twice";
  EXPECT_EQ(model.parameters()[0]->name, "pos_embed");
  EXPECT_EQ(model.parameters()[4]->name, "blocks.0.norm1.weight");
  EXPECT_EQ(model.parameters()[8]->name, "blocks.0.attn.qkv.weight");
  EXPECT_EQ(model.parameters().back()->name, "feature.3.bias");
  EXPECT_EQ(model.kept_tokens(), 129);
  // float32 values, as torch.linspace gives them.
  EXPECT_EQ(model.drop_path_rates().back(), static_cast<double>(0.1f));
}

// Embeddings of a training forward with the fixed draws, as a function of parameter `name`.
struct TinyRun {
  CpuBackend backend;
  VisionTransformer model;
  Tensor images = random_uniform({3, 18, 18, 3}, DType::f64, 11);
  explicit TinyRun(bool checkpoint = false) : model(backend, tiny(checkpoint)) {
    model.initialize(5);
    // Nonzero biases and LayerNorm shifts, so no gradient vanishes by symmetry.
    for (Parameter* p : model.parameters())
      if (p->name.ends_with(".bias") || p->name == "mask_token")
        backend.copy(random_uniform(p->value.shape(), DType::f64, p->value.numel()), p->value);
  }
  Tensor embeddings() {
    model.replay_draws(fixed_draws());
    return test::to_f64(model.forward(images, ForwardMode::training));
  }
};

TEST(VisionTransformer, GradientsMatchFiniteDifferences) {
  TinyRun run;
  for (const char* name : {"pos_embed", "mask_token", "patch_embed.proj.weight",
                           "patch_embed.proj.bias", "blocks.0.norm1.weight",
                           "blocks.1.attn.qkv.weight", "blocks.1.attn.proj.bias",
                           "blocks.1.mlp.fc1.weight", "norm.bias", "feature.0.weight"}) {
    SCOPED_TRACE(name);
    Parameter* p = run.model.find_parameter(name);
    ASSERT_NE(p, nullptr);
    test::check_gradients(
        {{name, test::to_f64(p->value)}},
        [&](const std::vector<Tensor>& in) {
          run.backend.copy(in[0], p->value);
          return std::vector<Tensor>{run.embeddings()};
        },
        [&](const std::vector<Tensor>& in, const std::vector<Tensor>& dout) {
          run.backend.copy(in[0], p->value);
          run.embeddings();
          run.model.backward(dout[0]);
          return std::vector<Tensor>{test::to_f64(p->grad)};
        },
        {.step = 1e-6, .rtol = 1e-5, .atol = 1e-8});
  }
}

TEST(VisionTransformer, CheckpointingChangesNoGradient) {
  TinyRun plain(false), checkpointed(true);
  const Tensor dy = random_uniform({3, 4}, DType::f64, 3);
  test::expect_tensors_near(checkpointed.embeddings(), plain.embeddings(), 0, 0, "embeddings");
  plain.model.backward(dy);
  checkpointed.model.backward(dy);
  for (std::size_t i = 0; i < plain.model.parameters().size(); ++i)
    test::expect_tensors_near(checkpointed.model.parameters()[i]->grad,
                              plain.model.parameters()[i]->grad, 0, 0,
                              plain.model.parameters()[i]->name);
}

TEST(VisionTransformer, DrawsDependOnTheGlobalSampleNotTheRankSplit) {
  const std::vector<double> rates{0.0, 0.3, 0.6};
  const VitDraws whole = draw_vit_randomness({7, 3, 0}, 4, 144, rates, true);
  const VitDraws first = draw_vit_randomness({7, 3, 0}, 2, 144, rates, true);
  const VitDraws second = draw_vit_randomness({7, 3, 2}, 2, 144, rates, true);
  for (std::int64_t s = 0; s < 4; ++s) {
    const VitDraws& part = s < 2 ? first : second;
    const std::int64_t local = s % 2;
    for (std::int64_t t = 0; t < 144; ++t)
      ASSERT_EQ(whole.mask_noise[s * 144 + t], part.mask_noise[local * 144 + t]);
    for (std::int64_t k = 0; k < 6; ++k)
      ASSERT_EQ(whole.drop_path_keep[k * 4 + s], part.drop_path_keep[k * 2 + local]);
  }
  // Block 0's rate 0 keeps every sample; another step draws other noise.
  for (std::int64_t s = 0; s < 4; ++s) EXPECT_EQ(whole.drop_path_keep[s], 1);
  EXPECT_NE(draw_vit_randomness({7, 4, 0}, 4, 144, rates, true).mask_noise, whole.mask_noise);
  // Masking keeps the lowest noise, in ascending order.
  const TokenSplit split = split_tokens({0.5, 0.1, 0.9, 0.3}, 1, 4, 3);
  EXPECT_EQ(split.kept, (std::vector<std::int64_t>{1, 3, 0}));
  EXPECT_EQ(split.dropped, (std::vector<std::int64_t>{2}));
}

TEST(VisionTransformer, RefusesOptionsItCannotBuild) {
  CpuBackend backend;
  auto refused = [&](VisionTransformerOptions o, const std::string& key) {
    try {
      VisionTransformer model(backend, o);
      ADD_FAILURE() << key << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  VisionTransformerOptions o = tiny();
  o.num_heads = 3;
  refused(o, "num_heads = 3");
  o = tiny();
  o.image_size = 100;
  refused(o, "image_size = 100");
  o = tiny();
  o.mask_ratio = 1.0;
  refused(o, "mask_ratio = 1");
  o = tiny();
  o.drop_path_rate = -0.1;
  refused(o, "drop_path_rate");
  o = tiny();
  o.image_size = 112;
  EXPECT_NO_THROW(VisionTransformer(backend, o));
}

}  // namespace
}  // namespace pfc
