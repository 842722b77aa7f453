// Reading a config: defaults, every key type, --set overrides and their precedence, and the
// source text that lets a run's metadata reproduce its Config.
#include <gtest/gtest.h>

#include <fstream>

#include "config/config_to_toml.h"
#include "config/load_config.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

TEST(ConfigParse, EmptyTextGivesTheDefaults) {
  const Config cfg = parse_config("", "empty.toml", {});
  EXPECT_EQ(config_to_toml(cfg), config_to_toml(Config{}));
  EXPECT_EQ(cfg.network, "r50");
  EXPECT_EQ(cfg.embedding_size, 512);
  EXPECT_EQ(cfg.batch_size, 128);
  EXPECT_DOUBLE_EQ(cfg.lr, 0.1);
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.5, 0.0}));
  EXPECT_EQ(cfg.source_text, "");
}

TEST(ConfigParse, ReadsEveryKindOfValue) {
  const Config cfg = parse_config(R"(
network = "custom"                # string
embedding_size = 256              # integer
lr = 1                            # an integer where a number is wanted
momentum = 0.5                    # number
fp16 = false                      # boolean
layers = [1, 2, 3, 4]             # array of integers
decay_epoch = [1, 2.5]            # array of numbers, integers among them
margin_list = [1.0, 0.0, 0.4]     # array of 3 numbers
num_classes = 3_000_000           # TOML's digit separators
)",
                                  "kinds.toml", {});
  EXPECT_EQ(cfg.network, "custom");
  EXPECT_EQ(cfg.embedding_size, 256);
  EXPECT_DOUBLE_EQ(cfg.lr, 1.0);
  EXPECT_DOUBLE_EQ(cfg.momentum, 0.5);
  EXPECT_FALSE(cfg.fp16);
  EXPECT_EQ(cfg.layers, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(cfg.decay_epoch, (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.0, 0.4}));
  EXPECT_EQ(cfg.num_classes, 3000000);
}

TEST(ConfigParse, OverridesReadTomlValues) {
  const Config cfg =
      parse_config("", "x.toml",
                   {"lr=0.2", "margin_list=[1.0,0.0,0.4]", "method=\"mp\"", "fp16=false",
                    "layers = [2, 2, 2, 2]", "network=custom", "decay_epoch=[]"});
  EXPECT_DOUBLE_EQ(cfg.lr, 0.2);
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.0, 0.4}));
  EXPECT_EQ(cfg.method, "mp");
  EXPECT_FALSE(cfg.fp16);
  EXPECT_EQ(cfg.layers, (std::vector<std::int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(cfg.network, "custom");
  EXPECT_TRUE(cfg.decay_epoch.empty());
}

TEST(ConfigParse, StringKeysTakeBareText) {
  const Config cfg = parse_config("", "x.toml",
                                  {"method=mp", "output=out/run 7", "rec=/data/ms1m-retinaface",
                                   "device = cuda ", "synthetic_labels=\"uniform\""});
  EXPECT_EQ(cfg.method, "mp");
  EXPECT_EQ(cfg.output, "out/run 7");
  EXPECT_EQ(cfg.rec, "/data/ms1m-retinaface");
  EXPECT_EQ(cfg.device, "cuda");
  EXPECT_EQ(cfg.synthetic_labels, "uniform");
}

TEST(ConfigParse, StringKeyTakesTextThatReadsAsAnotherType) {
  // `output=2024` is an integer in TOML, but output is a string: the text is meant.
  const Config cfg = parse_config("", "x.toml", {"output=2024", "rec=true"});
  EXPECT_EQ(cfg.output, "2024");
  EXPECT_EQ(cfg.rec, "true");
}

TEST(ConfigParse, LaterSettingsWin) {
  const Config cfg =
      parse_config("lr = 0.3\nbatch_size = 64\n", "x.toml", {"lr=0.2", "lr=0.5", "seed=7"});
  EXPECT_DOUBLE_EQ(cfg.lr, 0.5);        // file, then two overrides: the last one
  EXPECT_EQ(cfg.batch_size, 64);        // file only
  EXPECT_EQ(cfg.seed, 7);               // override only
  EXPECT_DOUBLE_EQ(cfg.momentum, 0.9);  // neither: the default
}

TEST(ConfigParse, OverridesAreValidatedWithTheFile) {
  // The file alone is invalid (sample_rate 0.1 needs pfc); the override makes it valid.
  const Config cfg =
      parse_config("method = \"mp\"\nsample_rate = 0.1\n", "x.toml", {"method=pfc"});
  EXPECT_EQ(cfg.method, "pfc");
  EXPECT_DOUBLE_EQ(cfg.sample_rate, 0.1);
}

TEST(ConfigParse, SourceTextIsTheFileWithoutOverrides) {
  const std::string text = "# a comment\nlr = 0.2\n";
  EXPECT_EQ(parse_config(text, "x.toml", {}).source_text, text);
  EXPECT_EQ(parse_config("lr = 0.2", "x.toml", {}).source_text, "lr = 0.2\n");
}

TEST(ConfigParse, SourceTextAppendsOverridesAsTomlLines) {
  const Config cfg = parse_config("lr = 0.2\n", "x.toml", {"lr=0.3", "method=mp", "fp16=false"});
  EXPECT_EQ(cfg.source_text, std::string("lr = 0.2\n") + std::string(kOverridesMarker) +
                                 "\nlr = 0.3\nmethod = \"mp\"\nfp16 = false\n");
}

TEST(ConfigParse, SourceTextReproducesTheConfig) {
  const Config first = parse_config("lr = 0.2\nnum_classes = 5000\n", "x.toml",
                                    {"lr=0.3", "method=mp", "output=out/a\"b"});
  const Config again = parse_config(first.source_text, "metadata", {});
  EXPECT_EQ(config_to_toml(again), config_to_toml(first));
  EXPECT_EQ(again.source_text, first.source_text);
  EXPECT_DOUBLE_EQ(again.lr, 0.3);
  EXPECT_EQ(again.output, "out/a\"b");

  // Overrides given when reading it back come after the recorded ones.
  const Config third = parse_config(first.source_text, "metadata", {"lr=0.4"});
  EXPECT_DOUBLE_EQ(third.lr, 0.4);
  EXPECT_EQ(third.method, "mp");
  EXPECT_EQ(third.source_text, first.source_text + "lr = 0.4\n");
}

TEST(ConfigParse, ConfigToTomlReadsBackToTheSameConfig) {
  Config cfg = parse_config("", "x.toml",
                            {"network=custom", "layers=[1,2,3,4]", "lr=0.012345678901234567",
                             "weight_decay=1e-5", "output=a\\b\tc", "margin_list=[1,0,0.35]",
                             "emulate_world_size=8", "emulate_rank=3"});
  const std::string text = config_to_toml(cfg);
  EXPECT_EQ(config_to_toml(parse_config(text, "written", {})), text);
  const std::string documented = config_to_toml(cfg, ConfigComments::kDocs);
  EXPECT_EQ(config_to_toml(parse_config(documented, "documented", {})), text);
}

TEST(ConfigParse, LoadConfigReadsAFile) {
  const std::string path = test::scratch_dir("ConfigParse.LoadConfigReadsAFile") + "/run.toml";
  std::ofstream(path) << "steps = 9\ndevice = \"cuda\"\n";
  const Config cfg = load_config(path, {"steps=3"});
  EXPECT_EQ(cfg.device, "cuda");
  EXPECT_EQ(cfg.steps, 3);
  EXPECT_EQ(cfg.source_text,
            "steps = 9\ndevice = \"cuda\"\n" + std::string(kOverridesMarker) + "\nsteps = 3\n");
}

}  // namespace
}  // namespace pfc
