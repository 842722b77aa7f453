// Mistakes in a config file or a --set: each is a UsageError (exit code 2) whose message
// names the file or override, the key, the value and what is allowed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "config/load_config.h"
#include "config/validate_config.h"
#include "core/error.h"
#include "support/usage_error.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

using test::usage_error;

std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return usage_error([&] { parse_config(text, "input/x.toml", overrides); });
}

TEST(ConfigErrors, UnknownKeySuggestsTheNearest) {
  EXPECT_EQ(parse_error("lr = 0.1\nbatchsize = 8\n"),
            "unknown key 'batchsize' in input/x.toml:2; did you mean 'batch_size'?");
  EXPECT_EQ(parse_error("", {"sample_rte=0.1"}),
            "unknown key 'sample_rte' in --set sample_rte=0.1; did you mean 'sample_rate'?");
  EXPECT_EQ(parse_error("num_clases = 10\n"),
            "unknown key 'num_clases' in input/x.toml:1; did you mean 'num_classes'?");
}

TEST(ConfigErrors, UnknownKeyFarFromAllListsThem) {
  const std::string message = parse_error("\n\nlearning_schedule_kind = 1\n");
  EXPECT_NE(message.find("unknown key 'learning_schedule_kind' in input/x.toml:3; the keys are: "
                         "network, embedding_size,"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("emulate_latency_us"), std::string::npos) << message;
}

TEST(ConfigErrors, TablesAreUnknownKeys) {
  // The config is flat: a [section] is a key that does not exist.
  const std::string message = parse_error("[train]\nlr = 0.1\n");
  EXPECT_NE(message.find("unknown key 'train' in input/x.toml:1"), std::string::npos) << message;
}

TEST(ConfigErrors, WrongTypeNamesKeyTypeAndValue) {
  EXPECT_EQ(parse_error("lr = \"fast\"\n"),
            "key 'lr' in input/x.toml:1 must be a number, got string \"fast\"");
  EXPECT_EQ(parse_error("", {"lr=fast"}),
            "key 'lr' in --set lr=fast must be a number, got string \"fast\"");
  EXPECT_EQ(parse_error("batch_size = 1.5\n"),
            "key 'batch_size' in input/x.toml:1 must be an integer, got number 1.5");
  EXPECT_EQ(parse_error("fp16 = 1\n"),
            "key 'fp16' in input/x.toml:1 must be a boolean, got integer 1");
  EXPECT_EQ(parse_error("method = 3\n"),
            "key 'method' in input/x.toml:1 must be a string, got integer 3");
  EXPECT_EQ(parse_error("widths = 64\n"),
            "key 'widths' in input/x.toml:1 must be an array of integers, got integer 64");
  EXPECT_EQ(parse_error("widths = [8, 16.5, 16, 32]\n"),
            "key 'widths' in input/x.toml:1 must be an array of integers, got array "
            "[8, 16.5, 16, 32]");
  EXPECT_EQ(parse_error("decay_epoch = [\"ten\"]\n"),
            "key 'decay_epoch' in input/x.toml:1 must be an array of numbers, got array "
            "[\"ten\"]");
  EXPECT_EQ(parse_error("", {"margin_list=[1.0,0.5]"}),
            "key 'margin_list' in --set margin_list=[1.0,0.5] must be an array of 3 numbers, "
            "got array [1.0, 0.5]");
  EXPECT_EQ(parse_error("", {"steps="}),
            "key 'steps' in --set steps= must be an integer, got string \"\"");
}

TEST(ConfigErrors, OutOfRangeNamesWhereItWasSet) {
  EXPECT_EQ(parse_error("seed = 1\nbatch_size = 0\n"),
            "key 'batch_size' in input/x.toml:2 must be >= 1, got 0");
  EXPECT_EQ(parse_error("batch_size = 4\n", {"batch_size=0"}),
            "key 'batch_size' in --set batch_size=0 must be >= 1, got 0");
  EXPECT_EQ(parse_error("method = \"fast\"\n"),
            "key 'method' in input/x.toml:1 must be one of dp|mp|pfc, got \"fast\"");
}

TEST(ConfigErrors, NumbersBeyondTheirTypeAreOutOfRange) {
  EXPECT_EQ(parse_error("", {"batch_size=99999999999999999999"}),
            "key 'batch_size' in --set batch_size=99999999999999999999 must be an integer, got "
            "99999999999999999999, which is out of range (an integer holds at most "
            "9223372036854775807)");
  EXPECT_EQ(parse_error("", {"lr=1e999"}),
            "key 'lr' in --set lr=1e999 must be a number, got 1e999, which is out of range (a "
            "number holds at most about 1.8e308)");
  const std::string in_file = parse_error("batch_size = 99999999999999999999\n");
  EXPECT_NE(in_file.find("not representable in 64 bits"), std::string::npos) << in_file;
}

TEST(ConfigErrors, TheWorldNeedsAClassPerRank) {
  Config cfg;
  cfg.num_classes = 1;
  EXPECT_NO_THROW(validate_for_world(cfg, 1));
  EXPECT_EQ(usage_error([&] { validate_for_world(cfg, 2); }),
            "num_classes = 1 must be at least the number of ranks, 2: every rank holds a shard "
            "of the classes");
}

TEST(ConfigErrors, SyntaxErrorGivesTheLine) {
  const std::string message = parse_error("lr = 0.1\nmargin_list = [1.0, 0.5\nseed = 3\n");
  EXPECT_EQ(message.rfind("TOML syntax error in input/x.toml:3:", 0), 0u) << message;
  const std::string twice = parse_error("lr = 0.1\nlr = 0.2\n");
  EXPECT_EQ(twice.rfind("TOML syntax error in input/x.toml:2:", 0), 0u) << twice;
  EXPECT_NE(twice.find("lr"), std::string::npos) << twice;
}

TEST(ConfigErrors, MalformedSet) {
  EXPECT_EQ(parse_error("", {"lr"}),
            "malformed --set 'lr': expected key=value (e.g. --set lr=0.2)");
  EXPECT_EQ(parse_error("", {"=0.2"}),
            "malformed --set '=0.2': expected key=value (e.g. --set lr=0.2)");
  EXPECT_EQ(parse_error("", {""}), "malformed --set '': expected key=value (e.g. --set lr=0.2)");
}

// A path in another encoding cannot be recorded in the run's TOML config: refused, not taken
// as raw text with its quotes (`"runs/out\xff"` once made a folder named with them).
TEST(ConfigErrors, ValuesThatAreNotUtf8AreRefused) {
  const std::string why = "is not UTF-8 text, and config values, paths included, are TOML";
  for (const char* value : {"\"runs/out\xff\"", "runs/out\xff", "'runs/\xc3'"}) {
    SCOPED_TRACE(value);
    const std::string message = parse_error("", {std::string("output=") + value});
    EXPECT_EQ(message.rfind("--set output '", 0), 0u) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_EQ(message.find('\xff'), std::string::npos) << "shown as \\xFF: " << message;
  }
  EXPECT_NE(parse_error("", {"output=runs/\xff"}).find("'runs/\\xFF'"), std::string::npos);
  // UTF-8 beyond ASCII is text like any other.
  EXPECT_NO_THROW(parse_config("", "input/x.toml", {"output=\"runs/\xc3\xa9t\xc3\xa9\""}));
}

TEST(ConfigErrors, MissingFile) {
  const std::string dir = test::scratch_dir("ConfigErrors.MissingFile");
  EXPECT_EQ(usage_error([&] { load_config(dir + "/nope.toml", {}); }),
            "config file '" + dir + "/nope.toml' does not exist");
  EXPECT_EQ(usage_error([&] { load_config(dir, {}); }),
            "config file '" + dir + "' is a directory, not a config file");
}

TEST(ConfigErrors, FileErrorsNameTheFile) {
  const std::string path = test::scratch_dir("ConfigErrors.FileErrorsNameTheFile") + "/bad.toml";
  std::ofstream(path) << "# header\nbatchsize = 8\n";
  EXPECT_EQ(usage_error([&] { load_config(path, {}); }),
            "unknown key 'batchsize' in " + path + ":2; did you mean 'batch_size'?");
}

}  // namespace
}  // namespace pfc
