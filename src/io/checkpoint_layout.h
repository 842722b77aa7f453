// Where checkpoints live and which ones count. A checkpoint is complete once its folder has
// its final name (step_NNNNNNN, renamed from step_NNNNNNN.tmp after every file was written
// and read back); the one to resume from is the one `latest` names, never a newer folder it
// does not name. Without a usable `latest` (deleted, damaged, naming a folder that is gone)
// the newest complete folder takes its place, and a checkpoint that turns out unreadable
// gives way to the one before it (see train/resume_checkpoint.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pfc {

struct CheckpointInfo {
  std::int64_t step = 0;
  std::filesystem::path path;  // the step folder
};

inline constexpr const char* kModelFile = "model.h5";
// Beside ckpt/ in a run's output folder.
inline constexpr const char* kMetricsFile = "metrics.h5";
inline constexpr const char* kTrainingLogFile = "training.log";
// model.h5's root attribute `format`.
inline constexpr std::string_view kCheckpointFormat = "pfc checkpoint 1";

// output/<run>/ckpt
std::filesystem::path checkpoint_root(const std::string& output_dir);
// step_0000042
std::string checkpoint_folder_name(std::int64_t step);
// shard_00003.h5
std::string shard_file_name(int rank);
// The step of a folder named step_NNNNNNN (nothing for any other name, .tmp ones included).
std::optional<std::int64_t> checkpoint_folder_step(const std::string& name);

// The checkpoint `latest` names, or nothing when there is no `latest`. Throws pfc::Error when
// `latest` is unreadable or names a folder that is missing or lacks model.h5.
std::optional<CheckpointInfo> latest_checkpoint(const std::filesystem::path& root);
// The checkpoints a run may continue from, the preferred one first.
struct ResumeCandidates {
  std::vector<CheckpointInfo> newest_first;
  std::string notice;  // why `latest` was not followed; "" when it was (or nothing was found)
};

// Of a run's checkpoint folder `root`: the one `latest` names, then the older complete ones.
// When `latest` is missing, unreadable or names no complete checkpoint: every complete one,
// newest first, with a notice saying so. Empty when root holds no complete checkpoint.
ResumeCandidates resume_candidates(const std::filesystem::path& root);
// What `resume_from` names: a complete step_NNNNNNN folder (itself alone), or a run's output
// folder (its resume_candidates). Throws pfc::UsageError naming the path otherwise.
ResumeCandidates named_resume_candidates(const std::filesystem::path& folder);
// What of a run a command that reads a run-or-checkpoint argument (pfc embed, export) must
// never write over: the run's checkpoint folder, metrics.h5 and training.log (a run folder,
// or <run> of a step folder <run>/ckpt/step_NNNNNNN), or the step folder alone (elsewhere).
std::vector<std::filesystem::path> run_files_of(const std::filesystem::path& run_or_checkpoint);
// Every complete checkpoint folder under root (holding model.h5), oldest first.
std::vector<CheckpointInfo> list_checkpoints(const std::filesystem::path& root);

}  // namespace pfc
