// Checkpoints against damage and divergence, on every rank count: a state holding a NaN on one
// rank is written by no rank and leaves `latest` and the earlier checkpoint as they were; a
// resume whose newest checkpoint is damaged where only one rank reads (its shard's checksum)
// falls back, on every rank alike, to the checkpoint before it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "comm/mpi_comm.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_values.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"
#include "support/hdf5_damage.h"
#include "train/resume_checkpoint.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;
using namespace pfc::test;

CheckpointRequest request_of(const Comm& comm) {
  const ShardLayout layout = ShardLayout::make(kClasses, comm.world_size(), comm.rank(), 1.0);
  return {kClasses, kEmbedding, layout.class_start, layout.num_local};
}

TEST(CheckpointDamage, ANonFiniteStateOnOneRankIsWrittenByNone) {
  const auto root = shared_scratch("checkpoint_nan_state");
  MpiComm comm;
  write_checkpoint(comm, root, checkpoint_at(10, comm.rank(), comm.world_size()), 1);
  Checkpoint diverged = checkpoint_at(20, comm.rank(), comm.world_size());
  const bool last = comm.rank() == comm.world_size() - 1;
  if (last) diverged.shard.weight.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  try {
    write_checkpoint(comm, root, diverged, 1);
    ADD_FAILURE() << "a NaN state was written";
  } catch (const UnusableCheckpoint& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("step_0000020 is not written (`latest` stays on step_0000010)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(last ? "the class centre of class" : "another rank's state"),
              std::string::npos)
        << text;
  }
  // keep_checkpoints = 1 would have rotated step 10 out: it is still there, whole.
  EXPECT_EQ(latest_checkpoint(root)->step, 10);
  EXPECT_FALSE(fs::exists(root / "step_0000020"));
  EXPECT_FALSE(fs::exists(root / "step_0000020.tmp"));
  expect_same_tensor(read_class_matrix(root / "step_0000010", "weight"),
                     class_rows(0, kClasses, 10, false), "step 10 weight");
}

TEST(CheckpointDamage, EveryRankFallsBackWhenOneRankCannotReadItsPart) {
  const auto root = shared_scratch("checkpoint_fallback");
  MpiComm comm;
  for (std::int64_t step : {10, 20})
    write_checkpoint(comm, root, checkpoint_at(step, comm.rank(), comm.world_size()), 2);
  const int victim = comm.world_size() - 1;
  if (comm.rank() == 0)
    flip_stored_byte((root / "step_0000020" / shard_file_name(victim)).string(), "/weight", 3);
  MPI_Barrier(MPI_COMM_WORLD);

  const ResumedCheckpoint resumed =
      read_first_readable(comm, resume_candidates(root), request_of(comm), comm.rank() == 0);
  EXPECT_EQ(resumed.info.step, 10);
  EXPECT_TRUE(resumed.latest_outdated);
  EXPECT_EQ(resumed.checkpoint.state.step, 10);
  expect_same_tensor(resumed.checkpoint.shard.weight,
                     checkpoint_at(10, comm.rank(), comm.world_size()).shard.weight,
                     "the shard resumed");

  // The damage is named: the checksum of the shard's dataset.
  if (comm.rank() == victim) {
    try {
      read_checkpoint(root / "step_0000020", request_of(comm));
      ADD_FAILURE() << "read a shard whose checksum does not match";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Fletcher32 checksum"), std::string::npos)
          << e.what();
    }
  }
  // With step 10 damaged too, no checkpoint is left: an error on every rank.
  if (comm.rank() == 0)
    flip_stored_byte((root / "step_0000010" / kModelFile).string(),
                     "/backbone/parameters/conv1.weight", 0);
  MPI_Barrier(MPI_COMM_WORLD);
  try {
    read_first_readable(comm, resume_candidates(root), request_of(comm), comm.rank() == 0);
    ADD_FAILURE() << "resumed from damaged checkpoints";
  } catch (const UsageError& e) {
    ADD_FAILURE() << "damage is not a usage error: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoint to continue from can be read"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pfc
