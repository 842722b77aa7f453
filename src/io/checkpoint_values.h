// Whether the numbers of a checkpoint can be trained on. Checked on every rank before a
// checkpoint is written (a diverged state must never replace a good checkpoint) and after one
// is read (damage that no checksum caught, or a file edited by hand).
//
// A value is usable when it is finite and below sqrt(FLT_MAX) = 1.8e19 in magnitude: the
// forward pass squares weights and centres (L2 norms of the class centres, batch-norm
// variances), so anything larger overflows f32 on the first step; no training reaches it.
#pragma once

#include <string>

#include "core/error.h"
#include "io/checkpoint.h"

namespace pfc {

// A state that cannot be trained on: the model diverged (before writing) or the file was
// damaged (after reading). Exit code 1.
class UnusableCheckpoint : public Error {
 public:
  using Error::Error;
};

// Throws UnusableCheckpoint naming the first unusable value: its tensor, its element (class
// and column of a class-centre shard) and the value. `where` opens the message.
void check_checkpoint_values(const Checkpoint& checkpoint, const std::string& where);

}  // namespace pfc
