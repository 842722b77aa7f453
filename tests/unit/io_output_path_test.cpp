// check_output_path: a path that cannot take a file is refused before any work, naming the
// argument and what is wrong; an output that is one of the inputs is refused whatever its
// spelling (./, .., a symbolic link, a hard link, a file deep in an input folder); a new file,
// a FIFO or a file beside the inputs passes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "io/checkpoint_layout.h"
#include "io/output_path.h"
#include "support/test_paths.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

bool says(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(OutputPath, APathThatCannotTakeAFileIsRefused) {
  const fs::path dir = test::scratch_dir("output_path_refused");
  test::write_text_file((dir / "file.txt").string(), "x");
  std::string text = test::usage_error([&] { check_output_path("", "--output"); });
  EXPECT_TRUE(says(text, "--output '' names no file")) << text;
  text = test::usage_error([&] { check_output_path(dir, "--output"); });
  EXPECT_TRUE(says(text, "is a folder")) << text;
  text = test::usage_error([&] { check_output_path(dir.string() + "/", "MODEL.onnx"); });
  EXPECT_TRUE(says(text, "MODEL.onnx")) << text;
  EXPECT_TRUE(says(text, "is a folder")) << text;
  text = test::usage_error([&] { check_output_path(dir / "missing" / "out.h5", "--output"); });
  EXPECT_TRUE(says(text, "does not exist")) << text;
  text = test::usage_error([&] { check_output_path(dir / "file.txt" / "train.rec", "OUT"); });
  EXPECT_TRUE(says(text, "is a file, not a folder")) << text;
  text = test::usage_error([&] {
    check_output_path(dir / "file.txt" / "a" / "train.rec", "OUT", {},
                      OutputFolder::created_if_missing);
  });
  EXPECT_TRUE(says(text, "is a file, not a folder")) << text;
}

TEST(OutputPath, NewFilesFifosAndFoldersToBeCreatedPass) {
  const fs::path dir = test::scratch_dir("output_path_pass");
  EXPECT_NO_THROW(check_output_path(dir / "new.h5", "--output"));
  EXPECT_NO_THROW(check_output_path(dir / "a" / "b" / "train.rec", "OUT", {},
                                    OutputFolder::created_if_missing));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  EXPECT_NO_THROW(check_output_path(dir / "fifo", "--outcome-file"));
  fs::create_symlink("later.txt", dir / "link");  // dangling: written where it leads
  EXPECT_NO_THROW(check_output_path(dir / "link", "--outcome-file"));
  fs::create_symlink(".", dir / "folder_link");
  const std::string text = test::usage_error([&] { check_output_path(dir / "folder_link", "X"); });
  EXPECT_TRUE(says(text, "is a folder")) << text;
}

TEST(OutputPath, AnInputIsRefusedWhateverItsSpelling) {
  const fs::path dir = test::scratch_dir("output_path_inputs");
  test::write_text_file((dir / "pairs.bin").string(), "bin");
  test::write_text_file((dir / "data" / "sub" / "train.idx").string(), "idx");
  test::write_text_file((dir / "other.h5").string(), "earlier output");
  fs::create_symlink("pairs.bin", dir / "link.bin");
  fs::create_hard_link(dir / "data" / "sub" / "train.idx", dir / "hard.idx");
  fs::create_symlink(".", dir / "data" / "self");  // not followed: no endless search
  const std::vector<fs::path> inputs = {dir / "pairs.bin", dir / "data"};
  for (const fs::path& output :
       {dir / "pairs.bin", dir / "." / "pairs.bin", dir / "data" / ".." / "pairs.bin",
        dir / "link.bin", dir / "hard.idx", dir / "data" / "sub" / "train.idx"}) {
    const std::string text =
        test::usage_error([&] { check_output_path(output, "--output", inputs); });
    EXPECT_TRUE(says(text, "which this command reads")) << output << ": " << text;
  }
  const std::string text =
      test::usage_error([&] { check_output_path(dir / "hard.idx", "--output", inputs); });
  EXPECT_TRUE(says(text, "(under '" + (dir / "data").string() + "')")) << text;
  EXPECT_NO_THROW(check_output_path(dir / "other.h5", "--output", inputs));
}

TEST(OutputPath, ARunsOwnFilesAreItsInputs) {
  const fs::path dir = test::scratch_dir("output_path_run");
  const fs::path step = dir / "run" / "ckpt" / "step_0000020";
  test::write_text_file((step / "model.h5").string(), "m");
  test::write_text_file((dir / "run" / "metrics.h5").string(), "m");
  test::write_text_file((dir / "run" / "training.log").string(), "m");
  test::write_text_file((dir / "run" / "emb.h5").string(), "an earlier pfc embed");
  for (const fs::path& given : {dir / "run", step, fs::path(step.string() + "/")}) {
    const std::vector<fs::path> inputs = run_files_of(given);
    for (const fs::path& output :
         {step / "model.h5", dir / "run" / "metrics.h5", dir / "run" / "training.log"})
      EXPECT_FALSE(test::usage_error([&] { check_output_path(output, "X", inputs); }).empty())
          << given << " " << output;
    EXPECT_NO_THROW(check_output_path(dir / "run" / "emb.h5", "X", inputs)) << given;
  }
  // A step folder outside a run's layout is its own only input.
  const fs::path loose = dir / "loose" / "step_0000005";
  test::write_text_file((loose / "model.h5").string(), "m");
  EXPECT_EQ(run_files_of(loose), std::vector<fs::path>{fs::absolute(loose).lexically_normal()});
}

}  // namespace
}  // namespace pfc
