// check_checkpoint_fits_model: a checkpoint of a shallower backbone is refused by a deeper one
// (and the reverse), naming the first tensor that has no counterpart and the config keys that
// differ; one of the same backbone fits; every optimiser moment is held to the model.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "config/config_to_toml.h"
#include "config/network_layers.h"
#include "model/iresnet.h"
#include "support/usage_error.h"
#include "train/checkpoint_model_match.h"

namespace pfc {
namespace {

Config custom_config(std::vector<std::int64_t> layers) {
  Config cfg;
  cfg.network = "custom";
  cfg.layers = std::move(layers);
  cfg.widths = {4, 8, 8, 8};
  cfg.image_size = 16;
  cfg.embedding_size = 8;
  return cfg;
}

IResNetOptions options_of(const Config& cfg) {
  IResNetOptions o;
  o.layers = network_layers(cfg);
  o.widths = cfg.widths;
  o.image_size = cfg.image_size;
  o.embedding_size = cfg.embedding_size;
  return o;
}

// What the trainer saves of a model: its parameters, their SGD momentum and its buffers.
Checkpoint saved_from(const IResNet& model, const Config& cfg, Backend& backend) {
  Checkpoint c;
  c.moments.push_back({"momentum", {}});
  for (const Parameter* p : model.parameters()) {
    c.parameters.push_back({p->name, model.export_parameter(*p)});
    if (p->trainable) c.moments[0].tensors.push_back({p->name, model.export_parameter(*p)});
  }
  for (const Buffer* b : model.buffers()) c.buffers.push_back({b->name, backend.to_host(b->value)});
  c.state.config_toml = config_to_toml(cfg);
  return c;
}

TEST(CheckpointModelMatch, TheSameBackboneFits) {
  auto backend = make_backend(BackendKind::cpu, 0);
  const Config cfg = custom_config({1, 1, 1, 1});
  IResNet model(*backend, options_of(cfg));
  EXPECT_NO_THROW(check_checkpoint_fits_model(saved_from(model, cfg, *backend), model, cfg,
                                              "ckpt/step_0000010"));
}

TEST(CheckpointModelMatch, ADeeperBackboneNamesTheMissingTensorAndTheKeys) {
  auto backend = make_backend(BackendKind::cpu, 0);
  const Config saved_cfg = custom_config({1, 1, 1, 1});
  const IResNet saved_model(*backend, options_of(saved_cfg));
  const Checkpoint checkpoint = saved_from(saved_model, saved_cfg, *backend);
  Config deeper = custom_config({2, 1, 1, 1});
  deeper.steps = 30;
  const IResNet model(*backend, options_of(deeper));
  const std::string text = test::usage_error(
      [&] { check_checkpoint_fits_model(checkpoint, model, deeper, "ckpt/step_0000010"); });
  EXPECT_NE(text.find("checkpoint 'ckpt/step_0000010' does not fit"), std::string::npos) << text;
  EXPECT_NE(text.find("the model's parameter 'layer1.1.bn1.weight' [4] is not in the checkpoint"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("layers = [1, 1, 1, 1] in the checkpoint, [2, 1, 1, 1] now"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("other keys that differ: steps"), std::string::npos) << text;

  // The other way: the checkpoint's extra blocks have no place in the shallower model.
  const Checkpoint deep_checkpoint = saved_from(model, deeper, *backend);
  const std::string reverse = test::usage_error([&] {
    check_checkpoint_fits_model(deep_checkpoint, saved_model, saved_cfg, "ckpt/step_0000020");
  });
  EXPECT_NE(reverse.find("the checkpoint's parameter 'layer1.1.bn1.weight' [4] has no place"),
            std::string::npos)
      << reverse;
}

TEST(CheckpointModelMatch, AWiderBackboneNamesTheShapes) {
  auto backend = make_backend(BackendKind::cpu, 0);
  const Config saved_cfg = custom_config({1, 1, 1, 1});
  const Checkpoint checkpoint =
      saved_from(IResNet(*backend, options_of(saved_cfg)), saved_cfg, *backend);
  Config wider = saved_cfg;
  wider.widths = {8, 8, 8, 8};
  const std::string text = test::usage_error([&] {
    check_checkpoint_fits_model(checkpoint, IResNet(*backend, options_of(wider)), wider, "c");
  });
  EXPECT_NE(text.find("the model's parameter 'conv1.weight' is [8, 3, 3, 3], the checkpoint's "
                      "is [4, 3, 3, 3]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("widths = [4, 8, 8, 8] in the checkpoint, [8, 8, 8, 8] now"),
            std::string::npos)
      << text;
}

// Each optimiser moment is checked by its name: an AdamW checkpoint whose second moment lacks a
// parameter is refused, naming the moment.
TEST(CheckpointModelMatch, EveryOptimiserMomentIsChecked) {
  auto backend = make_backend(BackendKind::cpu, 0);
  const Config cfg = custom_config({1, 1, 1, 1});
  const IResNet model(*backend, options_of(cfg));
  Checkpoint checkpoint = saved_from(model, cfg, *backend);
  checkpoint.moments = {{"exp_avg", checkpoint.moments[0].tensors},
                        {"exp_avg_sq", checkpoint.moments[0].tensors}};
  EXPECT_NO_THROW(check_checkpoint_fits_model(checkpoint, model, cfg, "c"));
  const std::string missing = checkpoint.moments[1].tensors.back().name;
  checkpoint.moments[1].tensors.pop_back();
  const std::string text =
      test::usage_error([&] { check_checkpoint_fits_model(checkpoint, model, cfg, "c"); });
  EXPECT_NE(text.find("the model's exp_avg_sq of '" + missing + "'"), std::string::npos) << text;
}

}  // namespace
}  // namespace pfc
