// A backbone to start from, as `pretrained` names it and `pfc import` reads it: a pfc run (its
// latest checkpoint) or checkpoint folder, a PyTorch state_dict as torch.save wrote it
// (arcface_torch's model.pt), or an ONNX model (torch2onnx.py's or pfc export's). Only the
// backbone is taken: class centres, optimiser state, step and schedule are not in it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/backbone.h"

namespace pfc {

struct PretrainedBackbone {
  std::string origin;              // what was read, for the log: "PyTorch state_dict 'x.pt'"
  std::vector<std::string> notes;  // what the log should warn about (folded batch norms)
};

// Reads `path` and loads its backbone into `network` once every tensor is checked to be
// exactly the network's (model/backbone_state.h: a UsageError naming the first that differs:
// another network, embedding size or layout) and finite (a NaN or an infinity names the
// tensor). PyTorch's batch-norm counters (num_batches_tracked) are dropped: pfc's batch norms
// use a fixed momentum. A file's kind is told by its first bytes, not its name; a model file is
// opened only when it is a regular file within the bounds its network sets
// (eval/model_file_limits.h), and a state_dict's names and shapes are checked before its
// storages are read. Throws a UsageError naming the path for anything unreadable.
PretrainedBackbone load_pretrained_backbone(Backbone& network, const std::filesystem::path& path);

}  // namespace pfc
