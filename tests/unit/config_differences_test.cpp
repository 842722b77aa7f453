// config_differences: the keys in which two configs differ, in the key table's order, with
// both values as TOML.
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

}  // namespace
}  // namespace pfc
