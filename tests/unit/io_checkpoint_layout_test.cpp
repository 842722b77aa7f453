// Checkpoint folders: names, which ones count, what `latest` may hold; and the durable
// replacement of a small file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/checkpoint_layout.h"
#include "io/durable_file.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path, const std::string& text = "") {
  test::write_text_file(path.string(), text);
}

TEST(CheckpointLayout, FolderNames) {
  EXPECT_EQ(checkpoint_folder_name(0), "step_0000000");
  EXPECT_EQ(checkpoint_folder_name(4200), "step_0004200");
  EXPECT_EQ(checkpoint_folder_name(123456789), "step_123456789");
  EXPECT_EQ(checkpoint_folder_step("step_0004200"), 4200);
  EXPECT_EQ(checkpoint_folder_step("step_123456789"), 123456789);
  EXPECT_FALSE(checkpoint_folder_step("step_0004200.tmp"));
  EXPECT_FALSE(checkpoint_folder_step("step_42"));
  EXPECT_FALSE(checkpoint_folder_step("latest"));
  EXPECT_FALSE(checkpoint_folder_step("step_00x0042"));
  EXPECT_EQ(shard_file_name(3), "shard_00003.h5");
  EXPECT_EQ(checkpoint_root("output/run"), fs::path("output/run/ckpt"));
}

TEST(CheckpointLayout, ListsOnlyCompleteFolders) {
  const fs::path root = test::scratch_dir("checkpoint_layout_list");
  touch(root / "step_0000020" / "model.h5");
  touch(root / "step_0000010" / "model.h5");
  touch(root / "step_0000030.tmp" / "model.h5");  // not renamed yet
  touch(root / "step_0000040" / "shard_00000.h5");  // no model.h5
  touch(root / "notes" / "model.h5");
  const auto found = list_checkpoints(root);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].step, 10);
  EXPECT_EQ(found[1].step, 20);
  EXPECT_EQ(found[1].path, root / "step_0000020");
  EXPECT_TRUE(list_checkpoints(root / "missing").empty());
}

TEST(CheckpointLayout, LatestNamesTheCheckpointToResume) {
  const fs::path root = test::scratch_dir("checkpoint_layout_latest");
  EXPECT_FALSE(latest_checkpoint(root).has_value());
  touch(root / "step_0000010" / "model.h5");
  touch(root / "step_0000020" / "model.h5");  // newer, but `latest` does not name it
  replace_file_atomically(root / "latest", "step_0000010\n");
  EXPECT_FALSE(fs::exists(root / "latest.tmp"));
  const auto latest = latest_checkpoint(root);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 10);
  EXPECT_EQ(latest->path, root / "step_0000010");
}

TEST(CheckpointLayout, DamagedLatestIsAClearError) {
  const fs::path root = test::scratch_dir("checkpoint_layout_damaged");
  touch(root / "latest", "garbage");
  try {
    latest_checkpoint(root);
    FAIL() << "accepted a garbled `latest`";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("garbage"), std::string::npos) << e.what();
  }
  touch(root / "latest", "step_0000050\n");
  try {
    latest_checkpoint(root);
    FAIL() << "accepted a `latest` that names a missing checkpoint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step_0000050"), std::string::npos) << e.what();
  }
}

std::vector<std::int64_t> steps_of(const ResumeCandidates& candidates) {
  std::vector<std::int64_t> steps;
  for (const CheckpointInfo& info : candidates.newest_first) steps.push_back(info.step);
  return steps;
}

TEST(CheckpointLayout, ResumeCandidatesFollowLatestThenOlderOnes) {
  const fs::path root = test::scratch_dir("checkpoint_layout_candidates");
  EXPECT_TRUE(resume_candidates(root).newest_first.empty());
  for (const char* step : {"step_0000010", "step_0000020", "step_0000030"})
    touch(root / step / "model.h5");
  touch(root / "latest", "step_0000020\n");
  const ResumeCandidates followed = resume_candidates(root);
  // Step 30 is a folder renamed just before a crash, which `latest` never named.
  EXPECT_EQ(steps_of(followed), (std::vector<std::int64_t>{20, 10}));
  EXPECT_EQ(followed.notice, "");
}

TEST(CheckpointLayout, WithoutAUsableLatestTheNewestCompleteFolderLeads) {
  const fs::path root = test::scratch_dir("checkpoint_layout_no_latest");
  touch(root / "step_0000010" / "model.h5");
  touch(root / "step_0000020" / "model.h5");
  touch(root / "step_0000030.tmp" / "shard_00000.h5");
  const ResumeCandidates missing = resume_candidates(root);
  EXPECT_EQ(steps_of(missing), (std::vector<std::int64_t>{20, 10}));
  EXPECT_NE(missing.notice.find("latest' is missing"), std::string::npos) << missing.notice;
  for (const char* text : {"step_0000040\n", "garbage"}) {
    touch(root / "latest", text);
    const ResumeCandidates dangling = resume_candidates(root);
    EXPECT_EQ(steps_of(dangling), (std::vector<std::int64_t>{20, 10})) << text;
    EXPECT_NE(dangling.notice.find(text == std::string("garbage") ? "garbage" : "step_0000040"),
              std::string::npos)
        << dangling.notice;
  }
}

TEST(CheckpointLayout, NamedCandidatesAreAStepFolderOrARunsCheckpoints) {
  const fs::path run = test::scratch_dir("checkpoint_layout_named");
  touch(run / "ckpt" / "step_0000010" / "model.h5");
  touch(run / "ckpt" / "step_0000020" / "model.h5");
  touch(run / "ckpt" / "latest", "step_0000010\n");
  EXPECT_EQ(steps_of(named_resume_candidates(run / "ckpt" / "step_0000020")),
            (std::vector<std::int64_t>{20}));
  const ResumeCandidates of_run = named_resume_candidates(run);
  EXPECT_EQ(steps_of(of_run), (std::vector<std::int64_t>{10}));
  EXPECT_EQ(of_run.newest_first.front().path, run / "ckpt" / "step_0000010");
  for (const fs::path& wrong : {run / "ckpt", run / "nowhere", run / "ckpt" / "step_0000030"}) {
    try {
      named_resume_candidates(wrong);
      FAIL() << "accepted " << wrong;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(wrong.string()), std::string::npos) << e.what();
    }
  }
}

TEST(DurableFile, ReplaceAndRename) {
  const fs::path dir = test::scratch_dir("durable_file");
  replace_file_atomically(dir / "f", "one");
  replace_file_atomically(dir / "f", "two");
  std::ifstream in(dir / "f");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "two");
  fs::create_directory(dir / "a");
  rename_durably(dir / "a", dir / "b");
  EXPECT_TRUE(fs::is_directory(dir / "b"));
  EXPECT_THROW(rename_durably(dir / "missing", dir / "c"), Error);
  EXPECT_THROW(sync_path(dir / "missing"), Error);
}

TEST(DurableFile, AFailedReplacementLeavesTheOldFileAndNoTemporary) {
  const fs::path dir = test::scratch_dir("durable_file_failure");
  replace_file_atomically(dir / "f", "one");
  // A non-empty folder where the file should go: the rename over it fails.
  fs::create_directories(dir / "g" / "inside");
  try {
    replace_file_atomically(dir / "g", "two");
    FAIL() << "replaced a non-empty folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot rename"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "g.tmp"));
  EXPECT_TRUE(fs::is_directory(dir / "g" / "inside"));
  // /dev/full takes no byte: the write fails with the system's words for a full disk.
  try {
    write_file_durably("/dev/full", "x");
    FAIL() << "wrote to /dev/full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pfc
