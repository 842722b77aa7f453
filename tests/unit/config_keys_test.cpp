// The key table: names, lookup, misspelling suggestions, and the descriptions that docs and
// messages use.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "config/config_keys.h"
#include "config/config_to_toml.h"

namespace pfc {
namespace {

TEST(ConfigKeys, NamesAreUniqueAndDocumented) {
  std::set<std::string_view> names;
  for (const ConfigKey& key : config_keys()) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name;
    EXPECT_FALSE(key.doc.empty()) << key.name;
    EXPECT_EQ(find_config_key(key.name), &key);
  }
  EXPECT_EQ(names.size(), 59u);  // a new Config member needs a row in the table
  EXPECT_EQ(find_config_key("batchsize"), nullptr);
}

TEST(ConfigKeys, NearestKeyCorrectsTypos) {
  EXPECT_EQ(nearest_config_key("batchsize"), "batch_size");
  EXPECT_EQ(nearest_config_key("Batch_Size"), "batch_size");
  EXPECT_EQ(nearest_config_key("num_class"), "num_classes");
  EXPECT_EQ(nearest_config_key("margin"), "margin_list");  // the start of a name
  EXPECT_EQ(nearest_config_key("emulate_world"), "emulate_world_size");
  EXPECT_EQ(nearest_config_key("xyz"), "");
  EXPECT_EQ(nearest_config_key("learning_schedule_kind"), "");
}

TEST(ConfigKeys, DescribesTypesAndLimits) {
  EXPECT_EQ(describe_type(*find_config_key("fp16")), "a boolean");
  EXPECT_EQ(describe_type(*find_config_key("batch_size")), "an integer");
  EXPECT_EQ(describe_type(*find_config_key("lr")), "a number");
  EXPECT_EQ(describe_type(*find_config_key("method")), "a string");
  EXPECT_EQ(describe_type(*find_config_key("widths")), "an array of integers");
  EXPECT_EQ(describe_type(*find_config_key("decay_epoch")), "an array of numbers");
  EXPECT_EQ(describe_type(*find_config_key("margin_list")), "an array of 3 numbers");

  EXPECT_EQ(describe_limits(*find_config_key("fp16")), "");
  EXPECT_EQ(describe_limits(*find_config_key("batch_size")), ">= 1");
  EXPECT_EQ(describe_limits(*find_config_key("lr")), "> 0");
  EXPECT_EQ(describe_limits(*find_config_key("sample_rate")), "in [0, 1]");
  EXPECT_EQ(describe_limits(*find_config_key("classifier_update")), "one of sampled|dense");
  EXPECT_EQ(describe_limits(*find_config_key("momentum")), "in [0, 1)");
  EXPECT_EQ(describe_limits(*find_config_key("method")), "one of dp|mp|pfc");
  EXPECT_EQ(describe_limits(*find_config_key("output")), "not empty");
  EXPECT_EQ(describe_limits(*find_config_key("widths")), "exactly 4 elements, each >= 1");
  EXPECT_EQ(describe_limits(*find_config_key("optimizer")), "one of sgd|adamw");
  EXPECT_EQ(describe_limits(*find_config_key("gradient_acc")), ">= 1");
  EXPECT_EQ(describe_limits(*find_config_key("interclass_filtering_threshold")), "in [0, 1)");
  EXPECT_EQ(describe_limits(*find_config_key("lr_scaling")), "one of batch/512|none");
  EXPECT_EQ(describe_limits(*find_config_key("lr_schedule")),
            "one of step|polynomial|polynomial_warmup");
  EXPECT_EQ(describe_limits(*find_config_key("lr_power")), ">= 0");
}

TEST(ConfigKeys, ConfigToTomlWritesEveryKeyOnceInTableOrder) {
  std::istringstream text(config_to_toml(Config{}));
  std::size_t i = 0;
  for (std::string line; std::getline(text, line); ++i) {
    ASSERT_LT(i, config_keys().size()) << line;
    EXPECT_EQ(line.rfind(std::string(config_keys()[i].name) + " = ", 0), 0u) << line;
  }
  EXPECT_EQ(i, config_keys().size());
  EXPECT_NE(config_to_toml(Config{}).find("margin_list = [1.0, 0.5, 0.0]\n"), std::string::npos);
  EXPECT_NE(config_to_toml(Config{}).find("weight_decay = 0.0005\n"), std::string::npos);
}

TEST(ConfigKeys, DocumentedTomlCommentsEachKey) {
  const std::string text = config_to_toml(Config{}, ConfigComments::kDocs);
  EXPECT_NE(text.find("# SGD momentum (unused by adamw) (a number; in [0, 1))\nmomentum = 0.9\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(a boolean)\nfp16 = true\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace pfc
