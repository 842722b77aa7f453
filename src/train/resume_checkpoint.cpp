#include "train/resume_checkpoint.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "config/config_differences.h"
#include "config/load_config.h"
#include "core/error.h"

namespace pfc {

namespace {

// How one rank's read of a candidate went; ordered so that the ranks agree on the worst.
enum Outcome : int { kRead = 0, kDamaged = 1, kRefused = 2 };

}  // namespace

ResumedCheckpoint read_first_readable(Comm& comm, const ResumeCandidates& candidates,
                                      const CheckpointRequest& request, bool leader) {
  PFC_CHECK(!candidates.newest_first.empty(), "no checkpoint to resume from");
  if (leader && !candidates.notice.empty())
    spdlog::warn("{}; continuing from the newest complete checkpoint, {}", candidates.notice,
                 candidates.newest_first.front().path.string());
  for (std::size_t i = 0; i < candidates.newest_first.size(); ++i) {
    const CheckpointInfo& info = candidates.newest_first[i];
    Outcome outcome = kRead;
    std::string why;
    Checkpoint checkpoint;
    try {
      checkpoint = read_checkpoint(info.path, request);
    } catch (const UsageError& e) {
      outcome = kRefused;
      why = e.what();
    } catch (const std::exception& e) {
      outcome = kDamaged;
      why = e.what();
    }
    const auto worst = static_cast<Outcome>(
        comm.all_reduce_scalar(static_cast<double>(outcome), ReduceOp::max));
    if (worst == kRead) {
      if (leader && !checkpoint.has_checksums)
        spdlog::warn("checkpoint '{}' has no checksums (written by a version of pfc before "
                     "them): it loads, but damage to its values shows only where they are not "
                     "finite",
                     info.path.string());
      return ResumedCheckpoint{info, std::move(checkpoint), i > 0 || !candidates.notice.empty()};
    }
    if (worst == kRefused)
      throw UsageError(outcome == kRefused
                           ? why
                           : fmt::format("checkpoint '{}' does not fit this run (another rank "
                                         "says why)",
                                         info.path.string()));
    if (outcome == kDamaged) spdlog::warn("{}", why);
    const bool last = i + 1 == candidates.newest_first.size();
    if (last)
      throw Error(fmt::format("no checkpoint to continue from can be read; the last one left, "
                              "'{}', is damaged{}",
                              info.path.string(),
                              outcome == kDamaged ? "" : " (another rank says why)"));
    if (leader)
      spdlog::warn("checkpoint '{}' is damaged; falling back to the one before it, '{}'",
                   info.path.string(), candidates.newest_first[i + 1].path.string());
  }
  throw Error("no checkpoint to continue from");
}

std::string describe_changed_keys(const ResumedCheckpoint& resumed, const Config& cfg) {
  Config saved;
  try {
    saved = parse_config(resumed.checkpoint.state.config_toml, "the checkpoint's config", {});
  } catch (const std::exception& e) {
    return fmt::format("checkpoint '{}': its saved config cannot be compared with this run's "
                       "({}); keys that changed since are not named",
                       resumed.info.path.string(), e.what());
  }
  const std::vector<ConfigDifference> changed = training_differences(saved, cfg);
  if (changed.empty()) return "";
  std::string keys;
  for (const ConfigDifference& d : changed)
    keys += fmt::format("{}{} = {} (was {})", keys.empty() ? "" : ", ", d.key, d.after, d.before);
  return fmt::format("this run's config differs from the one checkpoint '{}' was saved with in "
                     "{} key{}: {}; its state carries over to the new values",
                     resumed.info.path.string(), changed.size(), changed.size() == 1 ? "" : "s",
                     keys);
}

}  // namespace pfc
