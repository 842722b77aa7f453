// check_output_folder: a new run is refused where another run's metrics or checkpoints are,
// with a message that says how to continue it or start elsewhere; a continuing run, an empty
// or missing folder pass; a file in the folder's place is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "support/test_paths.h"
#include "support/usage_error.h"
#include "train/output_guard.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path, const std::string& text = "") {
  test::write_text_file(path.string(), text);
}

TEST(OutputGuard, AFreshFolderTakesANewRun) {
  const fs::path dir = test::scratch_dir("output_guard_fresh");
  EXPECT_NO_THROW(check_output_folder(dir / "new" / "deeper", false));
  fs::create_directories(dir / "empty");
  EXPECT_NO_THROW(check_output_folder(dir / "empty", false));
  touch(dir / "logs" / "train.log");  // what is not a run's does not count
  EXPECT_NO_THROW(check_output_folder(dir / "logs", false));
}

TEST(OutputGuard, AFolderHoldingARunRefusesANewOne) {
  const fs::path dir = test::scratch_dir("output_guard_run");
  touch(dir / "run" / "metrics.h5");
  touch(dir / "run" / "ckpt" / "step_0000010" / "model.h5");
  touch(dir / "run" / "ckpt" / "step_0000020" / "model.h5");
  touch(dir / "run" / "ckpt" / "latest", "step_0000020\n");
  const std::string text = test::usage_error([&] { check_output_folder(dir / "run", false); });
  EXPECT_NE(text.find("already holds a run (metrics.h5, 2 checkpoints)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("set resume = true"), std::string::npos) << text;
  EXPECT_NE(text.find("resume_from"), std::string::npos) << text;
  EXPECT_NE(text.find("another output"), std::string::npos) << text;
  EXPECT_NO_THROW(check_output_folder(dir / "run", true));

  // A run killed during its first checkpoint left only a staging folder.
  touch(dir / "partial" / "ckpt" / "step_0000005.tmp" / "shard_00000.h5");
  EXPECT_NE(test::usage_error([&] { check_output_folder(dir / "partial", false); })
                .find("1 unfinished checkpoint folder"),
            std::string::npos);
}

TEST(OutputGuard, AFileIsNoOutputFolder) {
  const fs::path dir = test::scratch_dir("output_guard_file");
  touch(dir / "out");
  EXPECT_NE(test::usage_error([&] { check_output_folder(dir / "out", true); }).find("is a file"),
            std::string::npos);
}

}  // namespace
}  // namespace pfc
