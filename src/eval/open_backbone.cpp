#include "eval/open_backbone.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "config/load_config.h"
#include "io/checkpoint_reader.h"
#include "model/backbone_state.h"
#include "model/make_backbone.h"

namespace pfc {

OpenedBackbone open_backbone(const std::filesystem::path& run_or_checkpoint, Backend& backend,
                             const OpenBackboneOptions& options) {
  OpenedBackbone opened;
  const ResumeCandidates candidates = named_resume_candidates(run_or_checkpoint);
  opened.checkpoint = candidates.newest_first.front();
  if (!candidates.notice.empty())
    spdlog::warn("{}: opening the newest complete checkpoint, {}", candidates.notice,
                 opened.checkpoint.path.string());
  const std::string origin = fmt::format("checkpoint '{}'", opened.checkpoint.path.string());
  const CheckpointBackbone saved = read_checkpoint_backbone(opened.checkpoint.path);
  opened.config = parse_config(saved.state.config_toml, origin + " (its config)", {});
  if (options.expected) check_same_network(opened.config, *options.expected, origin);
  opened.backbone = make_backbone(opened.config, backend, options.activations);
  load_backbone_state(*opened.backbone, saved.parameters, saved.buffers, origin);
  return opened;
}

}  // namespace pfc
