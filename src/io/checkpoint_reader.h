// Reads a checkpoint on any number of ranks: the backbone, optimizer and training state from
// model.h5, and any range of class rows through its virtual datasets, so a run saved on W
// ranks resumes on W' ranks. Each rank reads on its own (no collective); nothing is written.
// A missing or damaged file (a checksum that does not match, a shard that is missing, a value
// that is not finite) is a pfc::Error naming it; a checkpoint whose classes, embedding size or
// optimiser differ from the config is a pfc::UsageError naming both values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "io/checkpoint.h"

namespace pfc {

struct CheckpointRequest {
  std::int64_t num_classes = 0;     // the config's; the checkpoint must have the same
  std::int64_t embedding_size = 0;  // likewise
  std::int64_t class_start = 0;     // the class rows this rank holds in the resumed run
  std::int64_t num_local = 0;
  std::string optimizer = "sgd";    // the config's; the checkpoint must hold its state
};

// `folder` is a step folder (latest_checkpoint(root)->path).
Checkpoint read_checkpoint(const std::filesystem::path& folder, const CheckpointRequest& request);

// The backbone's parameters and buffers and the training state (the run's config included)
// of the step folder `folder`, without the classifier: what inference and export read.
struct CheckpointBackbone {
  std::vector<NamedTensor> parameters;
  std::vector<NamedTensor> buffers;
  TrainingState state;
};
CheckpointBackbone read_checkpoint_backbone(const std::filesystem::path& folder);

// The whole [num_classes, emb] matrix of "weight" or of one of the optimiser's moments
// ("momentum"; "exp_avg", "exp_avg_sq") (tools and tests).
Tensor read_class_matrix(const std::filesystem::path& folder, const std::string& which);

}  // namespace pfc
