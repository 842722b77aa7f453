// The verification keys (arcface_torch's val_targets and verbose): a TOML array of names, set
// from a file or --set, written back by config_to_toml, and refused with a message when a name
// is empty, holds a '/', or the run is emulated.
#include <gtest/gtest.h>

#include "config/config_keys.h"
#include "config/config_to_toml.h"
#include "config/load_config.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

using test::usage_error;

Config parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_config(text, "input/x.toml", overrides);
}

TEST(ConfigVerificationKeys, DefaultsVerifyNothingEvery2000Steps) {
  const Config cfg = parse("");
  EXPECT_TRUE(cfg.val_targets.empty());
  EXPECT_EQ(cfg.verbose, 2000);
  EXPECT_EQ(describe_type(*find_config_key("val_targets")), "an array of strings");
}

TEST(ConfigVerificationKeys, ReadFromTheFileAndFromSet) {
  const Config file = parse("val_targets = [\"lfw\", \"cfp_fp\", \"agedb_30\"]\nverbose = 500\n");
  EXPECT_EQ(file.val_targets, (std::vector<std::string>{"lfw", "cfp_fp", "agedb_30"}));
  EXPECT_EQ(file.verbose, 500);
  const Config set = parse("", {"val_targets=[\"lfw\"]", "verbose=10"});
  EXPECT_EQ(set.val_targets, std::vector<std::string>{"lfw"});
  EXPECT_EQ(set.verbose, 10);
}

TEST(ConfigVerificationKeys, WrittenBackAsTheyWereRead) {
  const Config cfg = parse("val_targets = [\"lfw\", \"a \\\"b\\\"\"]\n");
  const Config again = parse(config_to_toml(cfg));
  EXPECT_EQ(again.val_targets, cfg.val_targets);
}

TEST(ConfigVerificationKeys, RefusesWhatIsNotAListOfNames) {
  EXPECT_NE(usage_error([] { parse("val_targets = \"lfw\"\n"); }).find("an array of strings"),
            std::string::npos);
  EXPECT_NE(usage_error([] { parse("val_targets = [1, 2]\n"); }).find("an array of strings"),
            std::string::npos);
  EXPECT_NE(usage_error([] { parse("val_targets = [\"lfw\", \"\"]\n"); })
                .find("must not hold an empty string"),
            std::string::npos);
  EXPECT_NE(usage_error([] { parse("val_targets = [\"data/lfw\"]\n"); }).find("no '/'"),
            std::string::npos);
  EXPECT_NE(usage_error([] { parse("verbose = 0\n"); }).find("verbose"), std::string::npos);
}

TEST(ConfigVerificationKeys, AnEmulatedRunVerifiesNothing) {
  const std::string why = usage_error(
      [] { parse("val_targets = [\"lfw\"]\nemulate_world_size = 8\nnum_classes = 100\n"); });
  EXPECT_NE(why.find("emulated run"), std::string::npos) << why;
}

}  // namespace
}  // namespace pfc
