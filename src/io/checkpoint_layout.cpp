#include "io/checkpoint_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/input_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "step_";
constexpr int kStepDigits = 7;

}  // namespace

fs::path checkpoint_root(const std::string& output_dir) { return fs::path(output_dir) / "ckpt"; }

std::vector<fs::path> run_files_of(const fs::path& run_or_checkpoint) {
  fs::path folder = fs::absolute(run_or_checkpoint).lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();
  fs::path run = folder;
  if (checkpoint_folder_step(folder.filename().string())) {
    run = folder.parent_path().parent_path();
    if (folder.parent_path() != checkpoint_root(run.string())) return {folder};
  }
  return {checkpoint_root(run.string()), run / kMetricsFile, run / kTrainingLogFile};
}

std::string checkpoint_folder_name(std::int64_t step) {
  PFC_CHECK(step >= 0, "checkpoint step {} is negative", step);
  return fmt::format("{}{:0{}}", kPrefix, step, kStepDigits);
}

std::string shard_file_name(int rank) { return fmt::format("shard_{:05}.h5", rank); }

std::optional<std::int64_t> checkpoint_folder_step(const std::string& name) {
  if (name.size() < kPrefix.size() + kStepDigits || !name.starts_with(kPrefix)) return {};
  const std::string digits = name.substr(kPrefix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(),
                                         [](unsigned char c) { return std::isdigit(c); }))
    return {};
  return std::stoll(digits);
}

std::optional<CheckpointInfo> latest_checkpoint(const fs::path& root) {
  const fs::path pointer = root / "latest";
  if (!fs::exists(pointer)) return {};
  std::ifstream in(pointer);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw Error(fmt::format("cannot read '{}'", pointer.string()));
  std::string name = text.str();
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  const auto step = checkpoint_folder_step(name);
  if (!step)
    throw Error(fmt::format("'{}' should name a checkpoint folder (step_NNNNNNN) but holds '{}'",
                            pointer.string(), name));
  const fs::path folder = root / name;
  if (!fs::is_regular_file(folder / kModelFile))
    throw Error(fmt::format("'{}' names checkpoint '{}', but '{}' is missing", pointer.string(),
                            name, (folder / kModelFile).string()));
  return CheckpointInfo{*step, folder};
}

ResumeCandidates resume_candidates(const fs::path& root) {
  const std::vector<CheckpointInfo> complete = list_checkpoints(root);
  ResumeCandidates candidates;
  std::optional<CheckpointInfo> latest;
  try {
    latest = latest_checkpoint(root);
    if (!latest && !complete.empty())
      candidates.notice = fmt::format("'{}' is missing", (root / "latest").string());
  } catch (const Error& e) {
    candidates.notice = e.what();
  }
  for (auto it = complete.rbegin(); it != complete.rend(); ++it)
    if (!latest || it->step < latest->step) candidates.newest_first.push_back(*it);
  if (latest) candidates.newest_first.insert(candidates.newest_first.begin(), *latest);
  return candidates;
}

ResumeCandidates named_resume_candidates(const fs::path& folder) {
  // A FIFO, a device or a file named as a run is named as what it is (and never opened).
  if (std::error_code ec; fs::exists(folder, ec) && !fs::is_directory(folder, ec)) {
    const std::string kind = non_file_kind(folder);
    throw UsageError(fmt::format("'{}' {}, not a run's output folder nor a checkpoint folder",
                                 folder.string(), kind.empty() ? "is a file" : kind));
  }
  const auto step = checkpoint_folder_step(folder.filename().string());
  if (step && fs::is_regular_file(folder / kModelFile))
    return ResumeCandidates{{CheckpointInfo{*step, folder}}, ""};
  ResumeCandidates candidates = resume_candidates(checkpoint_root(folder.string()));
  if (!candidates.newest_first.empty()) return candidates;
  throw UsageError(fmt::format(
      "'{}' is neither a complete checkpoint folder (step_NNNNNNN holding {}) nor a run's output "
      "folder with a checkpoint (ckpt/step_NNNNNNN)",
      folder.string(), kModelFile));
}

std::vector<CheckpointInfo> list_checkpoints(const fs::path& root) {
  std::vector<CheckpointInfo> found;
  if (!fs::is_directory(root)) return found;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    const auto step = checkpoint_folder_step(entry.path().filename().string());
    if (step && entry.is_directory() && fs::is_regular_file(entry.path() / kModelFile))
      found.push_back({*step, entry.path()});
  }
  std::sort(found.begin(), found.end(),
            [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
  return found;
}

}  // namespace pfc
