// The optimiser's state in a checkpoint and back: the backbone's moments by parameter name in
// PyTorch layout (from the flat buffers), the class centres' moments by shard row, and the
// update counts (AdamW's bias correction resumes where it stopped). The moments keep
// torch.optim's names, so an SGD checkpoint is laid out as before AdamW existed.
#pragma once

#include <cstdint>
#include <string>

#include "io/checkpoint.h"
#include "model/backbone.h"
#include "pfc/partial_fc.h"
#include "train/training_step.h"

namespace pfc {

// Fills checkpoint.moments (when with_backbone: rank 0 writes the backbone), the moments of the
// head's rows [first_row, first_row + rows) into checkpoint.shard, and the optimiser's name and
// update counts into checkpoint.state.
void save_optimizer_state(const Backbone& model, TrainingStep& step, PartialFc& head,
                          std::int64_t first_row, std::int64_t rows, bool with_backbone,
                          Checkpoint& checkpoint);

// The reverse, for a checkpoint read for this rank's shard. Throws pfc::Error naming `where`
// when it holds moments of an unknown parameter or lacks one the optimiser needs.
void restore_optimizer_state(const Checkpoint& checkpoint, const std::string& where,
                             Backbone& model, TrainingStep& step, PartialFc& head);

}  // namespace pfc
