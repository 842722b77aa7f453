// Validation of a whole Config: each key's limits from the key table, and the rules between
// keys. Every problem is a UsageError naming the key, where it was set and what is allowed.
#include <gtest/gtest.h>

#include <functional>

#include "config/load_config.h"
#include "config/validate_config.h"
#include "core/error.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

using test::usage_error;

struct Case {
  std::vector<std::string> overrides;
  std::string message;
};

TEST(ConfigValidate, DefaultsAreValid) { EXPECT_NO_THROW(validate_config(Config{})); }

TEST(ConfigValidate, EachLimitIsReported) {
  const Case cases[] = {
      {{"batch_size=0"}, "key 'batch_size' in --set batch_size=0 must be >= 1, got 0"},
      {{"sample_rate=-0.1"},
       "key 'sample_rate' in --set sample_rate=-0.1 must be in [0, 1], got -0.1"},
      {{"sample_rate=1.5"},
       "key 'sample_rate' in --set sample_rate=1.5 must be in [0, 1], got 1.5"},
      {{"classifier_update=lazy"},
       "key 'classifier_update' in --set classifier_update=lazy must be one of sampled|dense, "
       "got \"lazy\""},
      {{"margin_gradient=none"},
       "key 'margin_gradient' in --set margin_gradient=none must be one of "
       "exact|straight_through, got \"none\""},
      {{"lr=0"}, "key 'lr' in --set lr=0 must be > 0, got 0.0"},
      {{"lr=-inf"}, "key 'lr' in --set lr=-inf must be a finite number, got -inf"},
      {{"momentum=1"}, "key 'momentum' in --set momentum=1 must be in [0, 1), got 1.0"},
      {{"weight_decay=-1e-4"},
       "key 'weight_decay' in --set weight_decay=-1e-4 must be >= 0, got -0.0001"},
      {{"num_classes=0"}, "key 'num_classes' in --set num_classes=0 must be >= 1, got 0"},
      {{"embedding_size=0"},
       "key 'embedding_size' in --set embedding_size=0 must be >= 1, got 0"},
      {{"method=fc"}, "key 'method' in --set method=fc must be one of dp|mp|pfc, got \"fc\""},
      {{"device=tpu"}, "key 'device' in --set device=tpu must be one of cpu|cuda|meta, got \"tpu\""},
      {{"network=r152"},
       "key 'network' in --set network=r152 must be one of "
       "r18|r34|r50|r100|r200|custom|mbf|mbf_large|vit_t|vit_t_dp005_mask0|vit_s|"
       "vit_s_dp005_mask_0|vit_b|vit_b_dp005_mask_005|vit_l_dp005_mask_005|vit_h|vit, got "
       "\"r152\""},
      {{"lr_schedule=cosine"},
       "key 'lr_schedule' in --set lr_schedule=cosine must be one of "
       "step|polynomial|polynomial_warmup, got \"cosine\""},
      {{"lr_schedule=polynomial_warmup", "lr_power=-1"},
       "key 'lr_power' in --set lr_power=-1 must be >= 0, got -1.0"},
      {{"lr_power=2"},
       "lr_power = 2.0 (--set lr_power=2) applies to a polynomial lr_schedule; lr_schedule = "
       "\"step\" (the default) decays in steps of x0.1 (set lr_power = 0, or lr_schedule = "
       "\"polynomial\" or \"polynomial_warmup\")"},
      {{"synthetic_labels=zipf"},
       "key 'synthetic_labels' in --set synthetic_labels=zipf must be one of constant|uniform, "
       "got \"zipf\""},
      {{"rec="}, "key 'rec' in --set rec= must not be empty, got \"\""},
      {{"optimizer=adam"},
       "key 'optimizer' in --set optimizer=adam must be one of sgd|adamw, got \"adam\""},
      {{"gradient_acc=0"}, "key 'gradient_acc' in --set gradient_acc=0 must be >= 1, got 0"},
      {{"interclass_filtering_threshold=1"},
       "key 'interclass_filtering_threshold' in --set interclass_filtering_threshold=1 must be "
       "in [0, 1), got 1.0"},
      {{"interclass_filtering_threshold=-0.1"},
       "key 'interclass_filtering_threshold' in --set interclass_filtering_threshold=-0.1 must "
       "be in [0, 1), got -0.1"},
      {{"lr_scaling=linear"},
       "key 'lr_scaling' in --set lr_scaling=linear must be one of batch/512|none, got "
       "\"linear\""},
      {{"widths=[8,16,32]"},
       "key 'widths' in --set widths=[8,16,32] must have exactly 4 elements, got [8, 16, 32]"},
      {{"widths=[8,0,16,32]"},
       "key 'widths' in --set widths=[8,0,16,32] must have every element >= 1, got "
       "[8, 0, 16, 32]"},
      {{"network=custom", "layers=[1,0,1,1]"},
       "key 'layers' in --set layers=[1,0,1,1] must have every element >= 1, got [1, 0, 1, 1]"},
      {{"image_size=0"}, "key 'image_size' in --set image_size=0 must be >= 16, got 0"},
      {{"frequent=0"}, "key 'frequent' in --set frequent=0 must be >= 1, got 0"},
      {{"steps=-1"}, "key 'steps' in --set steps=-1 must be >= 0, got -1"},
      {{"keep_checkpoints=0"},
       "key 'keep_checkpoints' in --set keep_checkpoints=0 must be >= 1, got 0"},
      {{"emulate_bandwidth_gbps=0"},
       "key 'emulate_bandwidth_gbps' in --set emulate_bandwidth_gbps=0 must be > 0, got 0.0"},
      // Rules between keys.
      {{"image_size=100"},
       "key 'image_size' in --set image_size=100 must be a multiple of 16 (four stride-2 "
       "stages), got 100"},
      {{"network=mbf", "image_size=128"},
       "network = \"mbf\" (--set network=mbf) needs image_size = 112 (its GDC head is a 7x7 "
       "convolution over the 7x7 map that four stride-2 stages leave), got image_size = 128 "
       "(--set image_size=128)"},
      {{"network=mbf_large", "image_size=96"},
       "network = \"mbf_large\" (--set network=mbf_large) needs image_size = 112 (its GDC head "
       "is a 7x7 convolution over the 7x7 map that four stride-2 stages leave), got image_size "
       "= 96 (--set image_size=96)"},
      {{"network=custom"},
       "network = \"custom\" (--set network=custom) needs layers = 4 positive integers (blocks "
       "per stage), got layers = [] (the default)"},
      {{"network=custom", "layers=[1,1,1]"},
       "network = \"custom\" (--set network=custom) needs layers = 4 positive integers (blocks "
       "per stage), got layers = [1, 1, 1] (--set layers=[1,1,1])"},
      {{"method=mp", "sample_rate=0.1"},
       "sample_rate = 0.1 (--set sample_rate=0.1) samples class centres, which only method "
       "\"pfc\" does, but method = \"mp\" (--set method=mp); set sample_rate = 1.0 or method = "
       "\"pfc\""},
      {{"margin_list=[0.9,0.5,0.0]"},
       "key 'margin_list' in --set margin_list=[0.9,0.5,0.0] must have m1 = 1.0 (as "
       "arcface_torch: no multiplicative margin), got [0.9, 0.5, 0.0]"},
      {{"margin_list=[1.0,0.5,0.4]"},
       "key 'margin_list' in --set margin_list=[1.0,0.5,0.4] may set m2 (ArcFace) or m3 "
       "(CosFace), not both, got [1.0, 0.5, 0.4]"},
      {{"decay_epoch=[16,10]"},
       "key 'decay_epoch' in --set decay_epoch=[16,10] must be strictly ascending, got "
       "[16.0, 10.0]"},
      {{"warmup_epoch=30"},
       "warmup_epoch = 30.0 (--set warmup_epoch=30) must be less than num_epoch = 30 (the "
       "default)"},
      {{"emulate_world_size=4", "emulate_rank=4"},
       "emulate_rank = 4 (--set emulate_rank=4) must be less than emulate_world_size = 4 (--set "
       "emulate_world_size=4) (and 0 when not emulating)"},
      {{"emulate_rank=1"},
       "emulate_rank = 1 (--set emulate_rank=1) must be less than emulate_world_size = 0 (the "
       "default) (and 0 when not emulating)"},
      {{"resume=true", "resume_from=\"output/other\""},
       "resume = true (--set resume=true) continues the run in `output` and resume_from = "
       "\"output/other\" (--set resume_from=\"output/other\") starts a new one from another "
       "checkpoint: set one of them (resume = \"auto\" does the first when `output` has a "
       "checkpoint, else the second)"},
      {{"pretrained=\"model.pt\"", "resume_from=\"output/other\""},
       "pretrained = \"model.pt\" (--set pretrained=\"model.pt\") starts a new run from a "
       "backbone and resume_from = \"output/other\" (--set resume_from=\"output/other\") from a "
       "whole checkpoint (its class centres, optimiser and step too): set one of them"},
      {{"num_classes=3", "emulate_world_size=4"},
       "num_classes = 3 (--set num_classes=3) must be at least emulate_world_size = 4 (--set "
       "emulate_world_size=4): every rank holds a shard of the classes"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(usage_error([&] { parse_config("", "x.toml", c.overrides); }), c.message)
        << c.overrides.front();
}

TEST(ConfigValidate, BoundsAreInclusiveWhereTheyShouldBe) {
  EXPECT_NO_THROW(parse_config("", "x.toml",
                               {"sample_rate=1", "momentum=0", "batch_size=1", "weight_decay=0",
                                "steps=0", "image_size=16", "warmup_epoch=29.5"}));
  EXPECT_NO_THROW(parse_config("", "x.toml", {"sample_rate=1e-6", "method=pfc"}));
}

TEST(ConfigValidate, ReportsEveryProblemAtOnce) {
  const std::string message = usage_error(
      [] { parse_config("batch_size = 0\nlr = -1\n", "input/x.toml", {"device=gpu"}); });
  EXPECT_EQ(message,
            "key 'batch_size' in input/x.toml:1 must be >= 1, got 0\n"
            "key 'lr' in input/x.toml:2 must be > 0, got -1.0\n"
            "key 'device' in --set device=gpu must be one of cpu|cuda|meta, got \"gpu\"");
}

TEST(ConfigValidate, NamesWhereEachKeyWasSet) {
  Config cfg;
  cfg.batch_size = 0;
  EXPECT_EQ(usage_error([&] { validate_config(cfg); }),
            "key 'batch_size' (the default) must be >= 1, got 0");
  EXPECT_EQ(usage_error([&] { validate_config(cfg, {{"batch_size", "jobs/a.toml:4"}}); }),
            "key 'batch_size' in jobs/a.toml:4 must be >= 1, got 0");
}

TEST(ConfigValidate, MobileFaceNetAt112IsValid) {
  EXPECT_NO_THROW(parse_config("network = \"mbf\"\n", "x.toml", {}));
  EXPECT_NO_THROW(parse_config("", "x.toml", {"network=mbf_large", "image_size=112"}));
}

TEST(ConfigValidate, LayersMatterOnlyForCustom) {
  // A config written for a custom network may switch to a named one with --set.
  const Config cfg =
      parse_config("network = \"custom\"\nlayers = [1, 1, 1, 1]\n", "x.toml", {"network=r18"});
  EXPECT_EQ(cfg.network, "r18");
}

}  // namespace
}  // namespace pfc
