#include "train/run_start.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"

namespace pfc {

namespace fs = std::filesystem;

RunStart plan_run_start(const Config& cfg) {
  const fs::path root = checkpoint_root(cfg.output);
  RunStart start;
  if (cfg.resume) {
    start.candidates = resume_candidates(root);
    if (start.candidates.newest_first.empty())
      throw UsageError(fmt::format("resume = true but {} holds no checkpoint", root.string()));
    start.continues_output = true;
  } else if (!cfg.resume_from.empty()) {
    start.candidates = named_resume_candidates(cfg.resume_from);
    // A checkpoint of this very output continues its run (going back to an earlier step).
    start.continues_output =
        fs::weakly_canonical(start.candidates.newest_first.front().path.parent_path()) ==
        fs::weakly_canonical(root);
  }
  return start;
}

}  // namespace pfc
