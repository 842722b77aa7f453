// find_bench_runs searches folders without following links to folders: a `self -> .` link, or
// one to the folder above, neither loops nor finds a file twice; a link that names a
// metrics.h5 file counts; a file that is not pfc's is listed as unreadable.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/report_runs.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

TEST(ReportRuns, LinksToFoldersAreNotFollowed) {
  const fs::path dir = test::scratch_dir("report_runs_links");
  test::write_text_file((dir / "runs" / "a" / "metrics.h5").string(), "not HDF5");
  fs::create_symlink(".", dir / "runs" / "self");
  fs::create_symlink("..", dir / "runs" / "a" / "up");
  fs::create_symlink(dir, dir / "runs" / "a" / "top");
  const FoundRuns found = find_bench_runs({(dir / "runs").string()});
  EXPECT_TRUE(found.runs.empty());
  ASSERT_EQ(found.unreadable.size(), 1u);
  EXPECT_EQ(found.unreadable[0].rfind((dir / "runs" / "a" / "metrics.h5").string(), 0), 0u)
      << found.unreadable[0];
}

}  // namespace
}  // namespace pfc
