// config_differences: the keys in which two configs differ, in the key table's order, with
// both values as TOML; training_differences: only those that decide what a run computes.
#include <gtest/gtest.h>

#include "config/config_differences.h"

namespace pfc {
namespace {

TEST(ConfigDifferences, ListsTheKeysThatDifferWithBothValues) {
  Config a, b;
  EXPECT_TRUE(config_differences(a, b).empty());
  a.network = "custom";
  a.layers = {1, 1, 1, 1};
  b.network = "custom";
  b.layers = {2, 1, 1, 1};
  b.lr = 0.2;
  const auto d = config_differences(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "lr");
  EXPECT_EQ(d[0].before, "0.1");
  EXPECT_EQ(d[0].after, "0.2");
  EXPECT_EQ(d[1].key, "layers");
  EXPECT_EQ(d[1].before, "[1, 1, 1, 1]");
  EXPECT_EQ(d[1].after, "[2, 1, 1, 1]");
}

TEST(ConfigDifferences, TrainingDifferencesLeaveOutHowARunIsCarriedOut) {
  Config a, b;
  b.gradient_acc = 2;
  b.sample_rate = 0.5;
  b.interclass_filtering_threshold = 0.2;
  b.method = "mp";
  b.steps = 99;
  b.frequent = 1;
  b.output = "elsewhere";
  b.resume = ResumeMode::on;
  b.checkpoint_every = 5;
  b.data_workers = 3;
  std::vector<std::string> keys;
  for (const ConfigDifference& d : training_differences(a, b)) keys.push_back(d.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"sample_rate", "gradient_acc",
                                            "interclass_filtering_threshold", "method"}));
  EXPECT_EQ(config_differences(a, b).size(), 10u);
}

}  // namespace
}  // namespace pfc
