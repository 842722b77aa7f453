// How a run begins (train/run_start.h): resume = false / true / "auto" with and without a
// checkpoint in `output`, and with resume_from; what each says in the log.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/load_config.h"
#include "support/test_paths.h"
#include "support/usage_error.h"
#include "train/run_start.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

// A complete checkpoint folder as checkpoint_layout.h counts them, named by `latest`.
void fake_checkpoint(const fs::path& output, std::int64_t step) {
  const fs::path folder = checkpoint_root(output.string()) / checkpoint_folder_name(step);
  fs::create_directories(folder);
  std::ofstream(folder / kModelFile) << "";
  std::ofstream(checkpoint_root(output.string()) / "latest") << checkpoint_folder_name(step);
}

Config config(const fs::path& output, std::vector<std::string> overrides) {
  overrides.push_back("output=\"" + output.string() + "\"");
  return parse_config("", "x.toml", overrides);
}

TEST(RunStart, ResumeReadsTrueFalseAndAuto) {
  EXPECT_EQ(parse_config("", "x.toml", {}).resume, ResumeMode::off);
  EXPECT_EQ(parse_config("resume = true\n", "x.toml", {}).resume, ResumeMode::on);
  EXPECT_EQ(parse_config("resume = \"auto\"\n", "x.toml", {}).resume, ResumeMode::automatic);
  EXPECT_EQ(parse_config("", "x.toml", {"resume=auto"}).resume, ResumeMode::automatic);
  EXPECT_EQ(parse_config("", "x.toml", {"resume=false"}).resume, ResumeMode::off);
  EXPECT_EQ(test::usage_error([] { parse_config("resume = \"yes\"\n", "x.toml", {}); }),
            "key 'resume' in x.toml:1 must be true, false or \"auto\", got string \"yes\"");
  // Written back as read: metrics.h5 keeps a config that loads again.
  const Config automatic = parse_config("", "x.toml", {"resume=\"auto\""});
  EXPECT_NE(automatic.source_text.find("resume = \"auto\""), std::string::npos);
  EXPECT_EQ(parse_config(automatic.source_text, "again.toml", {}).resume, ResumeMode::automatic);
}

TEST(RunStart, FalseStartsANewRunAndSaysNothing) {
  const fs::path output = test::scratch_dir("run_start_false");
  fake_checkpoint(output, 10);
  const RunStart start = decide_run_start(config(output, {}));
  EXPECT_EQ(start.kind, StartKind::fresh);
  EXPECT_TRUE(start.candidates.newest_first.empty());
  EXPECT_EQ(start.reason, "");
  EXPECT_FALSE(start.owns_output());  // the output guard refuses it: output holds a run
}

TEST(RunStart, TrueNeedsACheckpoint) {
  const fs::path output = test::scratch_dir("run_start_true");
  const Config cfg = config(output, {"resume=true"});
  EXPECT_EQ(test::usage_error([&] { decide_run_start(cfg); }),
            "resume = true but " + (output / "ckpt").string() +
                " holds no checkpoint (resume = \"auto\" starts a new run when there is none)");
  fake_checkpoint(output, 20);
  const RunStart start = decide_run_start(cfg);
  EXPECT_EQ(start.kind, StartKind::continue_run);
  ASSERT_FALSE(start.candidates.newest_first.empty());
  EXPECT_EQ(start.candidates.newest_first.front().step, 20);
  EXPECT_TRUE(start.owns_output());
}

TEST(RunStart, AutoStartsThenContinues) {
  const fs::path output = test::scratch_dir("run_start_auto");
  const Config cfg = config(output, {"resume=auto"});
  const RunStart first = decide_run_start(cfg);
  EXPECT_EQ(first.kind, StartKind::fresh);
  EXPECT_EQ(first.reason, "resume = \"auto\": " + (output / "ckpt").string() +
                              " holds no checkpoint; starting a new run");
  EXPECT_TRUE(first.owns_output());  // an earlier attempt's leftovers make way
  fake_checkpoint(output, 30);
  const RunStart later = decide_run_start(cfg);
  EXPECT_EQ(later.kind, StartKind::continue_run);
  ASSERT_FALSE(later.candidates.newest_first.empty());
  EXPECT_EQ(later.candidates.newest_first.front().path, output / "ckpt" / "step_0000030");
  EXPECT_EQ(later.reason, "resume = \"auto\": " + (output / "ckpt").string() +
                              " has a checkpoint; continuing the run");
}

TEST(RunStart, AutoWarnsWhenTheRunWritesNoCheckpoints) {
  const fs::path output = test::scratch_dir("run_start_auto_never");
  const RunStart start = decide_run_start(config(output, {"resume=auto", "checkpoint_every=-1"}));
  EXPECT_NE(start.reason.find("checkpoint_every = -1 writes none, so a stopped run will start "
                              "over"),
            std::string::npos)
      << start.reason;
}

TEST(RunStart, ResumeFromStartsFromAnotherRun) {
  const fs::path other = test::scratch_dir("run_start_other");
  const fs::path output = test::scratch_dir("run_start_from");
  fake_checkpoint(other, 40);
  const std::string from = "resume_from=\"" + other.string() + "\"";
  const RunStart plain = decide_run_start(config(output, {from}));
  EXPECT_EQ(plain.kind, StartKind::from_checkpoint);
  ASSERT_FALSE(plain.candidates.newest_first.empty());
  EXPECT_EQ(plain.candidates.newest_first.front().step, 40);
  EXPECT_FALSE(plain.owns_output());

  // "auto" with resume_from: the other run's checkpoint until this run has one of its own.
  const Config automatic = config(output, {from, "resume=auto"});
  const RunStart first = decide_run_start(automatic);
  EXPECT_EQ(first.kind, StartKind::from_checkpoint);
  EXPECT_NE(first.reason.find("starting from resume_from"), std::string::npos) << first.reason;
  fake_checkpoint(output, 45);
  const RunStart later = decide_run_start(automatic);
  EXPECT_EQ(later.kind, StartKind::continue_run);
  EXPECT_EQ(later.candidates.newest_first.front().step, 45);
}

TEST(RunStart, ResumeFromInsideOutputContinuesTheRun) {
  const fs::path output = test::scratch_dir("run_start_own");
  fake_checkpoint(output, 50);
  const RunStart start = decide_run_start(
      config(output, {"resume_from=\"" + (output / "ckpt" / "step_0000050").string() + "\""}));
  EXPECT_EQ(start.kind, StartKind::continue_run);
}

}  // namespace
}  // namespace pfc
