#include "train/output_guard.h"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/checkpoint_layout.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// What of a run the folder holds, in words ("metrics.h5", "2 checkpoints (latest
// step_0000020)"); empty when nothing.
std::vector<std::string> run_contents(const fs::path& output) {
  std::vector<std::string> found;
  std::error_code ec;
  if (fs::exists(output / kMetricsFile, ec)) found.push_back(kMetricsFile);
  const fs::path root = checkpoint_root(output.string());
  if (!fs::is_directory(root, ec)) return found;
  const std::size_t complete = list_checkpoints(root).size();
  std::size_t partial = 0;
  bool has_latest = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "latest") has_latest = true;
    if (name.starts_with("step_") && !checkpoint_folder_step(name)) ++partial;
  }
  if (complete > 0)
    found.push_back(fmt::format("{} checkpoint{}", complete, complete == 1 ? "" : "s"));
  if (partial > 0) found.push_back(fmt::format("{} unfinished checkpoint folder(s)", partial));
  if (has_latest && complete == 0) found.push_back("ckpt/latest");
  return found;
}

// The folder itself, or the nearest one above it that exists (where it will be created).
fs::path existing_folder(fs::path path) {
  std::error_code ec;
  while (!path.empty() && !fs::exists(path, ec)) path = path.parent_path();
  return path.empty() ? fs::path(".") : path;
}

void check_writable(const fs::path& output) {
  const fs::path folder = existing_folder(fs::absolute(output));
  struct statvfs fs_info {};
  if (::statvfs(folder.c_str(), &fs_info) == 0 && (fs_info.f_flag & ST_RDONLY))
    throw Error(fmt::format("output = \"{}\": '{}' is on a read-only file system; a run writes "
                            "its metrics and checkpoints there",
                            output.string(), folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw Error(fmt::format("output = \"{}\": cannot write in '{}': {}", output.string(),
                            folder.string(), std::strerror(errno)));
}

}  // namespace

void check_output_folder(const fs::path& output, bool owns_output) {
  std::error_code ec;
  if (fs::exists(output, ec) && !fs::is_directory(output, ec))
    throw UsageError(fmt::format("output = \"{}\" is a file, not a folder", output.string()));
  check_writable(output);
  if (owns_output) return;
  const std::vector<std::string> found = run_contents(output);
  if (found.empty()) return;
  std::string contents;
  for (const std::string& item : found) contents += (contents.empty() ? "" : ", ") + item;
  throw UsageError(fmt::format(
      "output = \"{0}\" already holds a run ({1}); a new run there would overwrite it, so it is "
      "not started. To continue that run, set resume = true (or \"auto\"); to start a new run "
      "from its checkpoint, set resume_from = \"{0}\" and another output; to start over, "
      "choose another output (or move {0} away)",
      output.string(), contents));
}

}  // namespace pfc
