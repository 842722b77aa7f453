#include "train/run_start.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

bool inside(const fs::path& folder, const fs::path& root) {
  return fs::weakly_canonical(folder.parent_path()) == fs::weakly_canonical(root);
}

// resume_from names a checkpoint; one that lies in this output's own checkpoint folder
// continues this run (it is not written again at the end).
RunStart from_named(const Config& cfg, const fs::path& ckpt_root, std::string reason) {
  RunStart start;
  start.candidates = named_resume_candidates(cfg.resume_from);
  start.kind = inside(start.candidates.newest_first.front().path, ckpt_root)
                   ? StartKind::continue_run
                   : StartKind::from_checkpoint;
  start.reason = std::move(reason);
  return start;
}

std::string no_checkpoint_warning(const Config& cfg) {
  if (cfg.checkpoint_every >= 0) return "";
  return "; checkpoint_every = -1 writes none, so a stopped run will start over";
}

}  // namespace

RunStart decide_run_start(const Config& cfg) {
  const fs::path ckpt_root = checkpoint_root(cfg.output);
  const bool has_resume_from = !cfg.resume_from.empty();
  switch (cfg.resume) {
    case ResumeMode::on: {
      ResumeCandidates own = resume_candidates(ckpt_root);
      if (own.newest_first.empty())
        throw UsageError(fmt::format(
            "resume = true but {} holds no checkpoint (resume = \"auto\" starts a new run "
            "when there is none)",
            ckpt_root.string()));
      return {StartKind::continue_run, std::move(own), "", false};
    }
    case ResumeMode::automatic: {
      if (ResumeCandidates own = resume_candidates(ckpt_root); !own.newest_first.empty())
        return {StartKind::continue_run, std::move(own),
                fmt::format("resume = \"auto\": {} has a checkpoint; continuing the run",
                            ckpt_root.string()),
                false};
      const std::string none = fmt::format("resume = \"auto\": {} holds no checkpoint; ",
                                           ckpt_root.string());
      RunStart start = has_resume_from
                           ? from_named(cfg, ckpt_root,
                                        none + "starting from resume_from" +
                                            no_checkpoint_warning(cfg))
                           : RunStart{StartKind::fresh, {},
                                      none + "starting a new run" + no_checkpoint_warning(cfg),
                                      false};
      start.starts_over = true;
      return start;
    }
    case ResumeMode::off:
      break;
  }
  if (has_resume_from) return from_named(cfg, ckpt_root, "");
  return {};
}

}  // namespace pfc
