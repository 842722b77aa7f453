// The shipped configs in input/: each one loads and validates, sets every key of the table
// (TOML has no include, so each file is complete), and explains each key in a comment.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "config/config_keys.h"
#include "config/config_to_toml.h"
#include "config/load_config.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> input_files() {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(test::source_dir()) / "input";
  if (fs::is_directory(dir))
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().extension() == ".toml")
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

Config load(const std::string& name) {
  return load_config((fs::path(test::source_dir()) / "input" / name).string(), {});
}

TEST(ConfigInputFiles, TheShippedFilesExist) {
  std::set<std::string> names;
  for (const fs::path& file : input_files()) names.insert(file.filename().string());
  for (const char* name : {"base.toml", "3millions.toml", "3millions_pfc.toml", "smoke.toml"})
    EXPECT_TRUE(names.count(name)) << name << " missing from " << test::source_dir() << "/input";
}

TEST(ConfigInputFiles, EveryFileLoadsAndValidates) {
  for (const fs::path& file : input_files())
    EXPECT_NO_THROW(load_config(file.string(), {})) << file;
}

TEST(ConfigInputFiles, EveryFileSetsEveryKeyWithAComment) {
  const std::regex key_line(R"(^([A-Za-z0-9_]+)\s*=)");
  for (const fs::path& file : input_files()) {
    std::ifstream in(file);
    std::set<std::string> keys;
    std::string previous;
    for (std::string line; std::getline(in, line); previous = line) {
      std::smatch m;
      if (!std::regex_search(line, m, key_line)) continue;
      keys.insert(m[1]);
      EXPECT_EQ(previous.rfind("#", 0), 0u)
          << file << ": key '" << m[1] << "' has no comment on the line above";
    }
    for (const ConfigKey& key : config_keys())
      EXPECT_TRUE(keys.count(std::string(key.name))) << file << " does not set " << key.name;
  }
}

TEST(ConfigInputFiles, BaseHoldsTheSeedSettings) {
  const Config cfg = load("base.toml");
  EXPECT_EQ(cfg.network, "r50");
  EXPECT_EQ(cfg.embedding_size, 512);
  EXPECT_DOUBLE_EQ(cfg.sample_rate, 1.0);
  EXPECT_TRUE(cfg.fp16);
  EXPECT_EQ(cfg.batch_size, 128);
  EXPECT_DOUBLE_EQ(cfg.lr, 0.1);
  EXPECT_DOUBLE_EQ(cfg.momentum, 0.9);
  EXPECT_DOUBLE_EQ(cfg.weight_decay, 5e-4);
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.5, 0.0}));
  EXPECT_EQ(cfg.rec, "synthetic");
  EXPECT_EQ(cfg.num_epoch, 30);
  EXPECT_EQ(cfg.image_size, 112);
}

// Every shipped file rebuilds the seed's benchmark, so every one takes the seed's classifier:
// the sampled update and the exact margin gradient (and pfc's f16 GEMMs with fp16 on).
TEST(ConfigInputFiles, EveryFileTakesTheSeedsClassifier) {
  for (const fs::path& file : input_files()) {
    const Config cfg = load_config(file.string(), {});
    EXPECT_EQ(cfg.classifier_update, "sampled") << file;
    EXPECT_EQ(cfg.margin_gradient, "exact") << file;
    EXPECT_EQ(cfg.classifier_precision, "fp16") << file;
  }
}

TEST(ConfigInputFiles, HeadlineFilesDifferOnlyInTheClassifier) {
  const Config mp = load("3millions.toml");
  const Config pfc = load("3millions_pfc.toml");
  EXPECT_EQ(mp.num_classes, 3000000);
  EXPECT_EQ(mp.method, "mp");
  EXPECT_DOUBLE_EQ(mp.sample_rate, 1.0);
  EXPECT_EQ(mp.device, "cuda");
  EXPECT_EQ(mp.rec, "synthetic");
  EXPECT_EQ(pfc.num_classes, 3000000);
  EXPECT_EQ(pfc.method, "pfc");
  EXPECT_DOUBLE_EQ(pfc.sample_rate, 0.1);
  EXPECT_EQ(pfc.device, "cuda");
  EXPECT_EQ(pfc.rec, "synthetic");
  // Everything else agrees, so the two runs compare the classifier alone.
  const Config as_mp =
      load_config((fs::path(test::source_dir()) / "input" / "3millions_pfc.toml").string(),
                  {"method=mp", "sample_rate=1.0", "output=output/3millions"});
  EXPECT_EQ(config_to_toml(as_mp), config_to_toml(mp));
}

TEST(ConfigInputFiles, SmokeRunsOnACpuInSeconds) {
  const Config cfg = load("smoke.toml");
  EXPECT_EQ(cfg.device, "cpu");
  EXPECT_EQ(cfg.network, "custom");
  EXPECT_EQ(cfg.layers, (std::vector<std::int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(cfg.widths, (std::vector<std::int64_t>{8, 16, 16, 32}));
  EXPECT_EQ(cfg.image_size, 32);
  EXPECT_EQ(cfg.embedding_size, 32);
  EXPECT_EQ(cfg.batch_size, 8);
  EXPECT_EQ(cfg.num_classes, 1000);
  EXPECT_EQ(cfg.method, "pfc");
  EXPECT_DOUBLE_EQ(cfg.sample_rate, 0.5);
  EXPECT_FALSE(cfg.fp16);
  EXPECT_EQ(cfg.synthetic_labels, "uniform");
  EXPECT_EQ(cfg.steps, 20);
  EXPECT_EQ(cfg.frequent, 5);
  EXPECT_EQ(cfg.output, "output/smoke");
  EXPECT_EQ(cfg.checkpoint_every, 10);
}

}  // namespace
}  // namespace pfc
