// Checkpoints written on w ranks (every w up to the world size, through a sub-communicator)
// read back exactly under every layout of 1..4 ranks: the resume of a run on another number
// of ranks (2 -> 3, 3 -> 2, 1 -> 2, ...).
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_comm.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"

namespace pfc {
namespace {

using namespace pfc::test;

// Ranks [0, w) of the world write the checkpoint of `step` under root.
void write_on_first_ranks(int w, const std::filesystem::path& root, std::int64_t step) {
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < w ? 0 : MPI_UNDEFINED, world_rank(), &sub);
  if (sub != MPI_COMM_NULL) {
    {
      MpiComm comm(sub);
      const CheckpointInfo written =
          write_checkpoint(comm, root, checkpoint_at(step, comm.rank(), w), 2);
      EXPECT_EQ(written.step, step);
      EXPECT_EQ(written.path, root / checkpoint_folder_name(step));
    }
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CheckpointRoundTrip, ResumesOnAnyNumberOfRanks) {
  const auto scratch = shared_scratch("checkpoint_roundtrip");
  for (int w = 1; w <= world_size(); ++w) {
    const auto root = scratch / ("written_on_" + std::to_string(w));
    const std::int64_t step = 100 + w;
    write_on_first_ranks(w, root, step);

    const auto latest = latest_checkpoint(root);
    ASSERT_TRUE(latest.has_value());
    EXPECT_EQ(latest->step, step);
    const Checkpoint saved = checkpoint_at(step, 0, w);
    // Every process reads the share of some ranks of every layout 1..4.
    for (int resumed_world = 1; resumed_world <= 4; ++resumed_world) {
      for (int r = world_rank(); r < resumed_world; r += world_size()) {
        SCOPED_TRACE(::testing::Message() << "written on " << w << " ranks, read as rank " << r
                                          << " of " << resumed_world);
        const ShardLayout layout = ShardLayout::make(kClasses, resumed_world, r, 1.0);
        const Checkpoint read = read_checkpoint(
            latest->path, {kClasses, kEmbedding, layout.class_start, layout.num_local});
        expect_same_named(read.parameters, saved.parameters);
        expect_same_named(read.momentum, saved.momentum);
        expect_same_named(read.buffers, saved.buffers);
        EXPECT_EQ(read.shard.class_start, layout.class_start);
        expect_same_tensor(read.shard.weight,
                           class_rows(layout.class_start, layout.num_local, step, false),
                           "class centres");
        expect_same_tensor(read.shard.momentum,
                           class_rows(layout.class_start, layout.num_local, step, true),
                           "class centre momentum");
        const TrainingState& s = read.state;
        EXPECT_EQ(s.step, step);
        EXPECT_EQ(s.epoch, saved.state.epoch);
        EXPECT_EQ(s.data, saved.state.data);
        EXPECT_EQ(s.loss_scale, 256.0);
        EXPECT_EQ(s.loss_scale_clean_steps, saved.state.loss_scale_clean_steps);
        EXPECT_EQ(s.lr_step, step);
        EXPECT_EQ(s.seed, 2048);
        EXPECT_EQ(s.world_size, w);
        EXPECT_EQ(s.method, "pfc");
        EXPECT_EQ(s.sample_rate, 0.25);
        EXPECT_EQ(s.num_classes, kClasses);
        EXPECT_EQ(s.embedding_size, kEmbedding);
        EXPECT_EQ(s.config_toml, saved.state.config_toml);
      }
    }
    expect_same_tensor(read_class_matrix(latest->path, "weight"),
                       class_rows(0, kClasses, step, false), "whole weight matrix");
    expect_same_tensor(read_class_matrix(latest->path, "momentum"),
                       class_rows(0, kClasses, step, true), "whole momentum matrix");
  }
}

TEST(CheckpointRoundTrip, FolderCanMove) {
  const auto scratch = shared_scratch("checkpoint_moved");
  write_on_first_ranks(world_size(), scratch / "before", 5);
  if (world_rank() == 0) std::filesystem::rename(scratch / "before", scratch / "after");
  MPI_Barrier(MPI_COMM_WORLD);
  const auto latest = latest_checkpoint(scratch / "after");
  ASSERT_TRUE(latest.has_value());
  expect_same_tensor(read_class_matrix(latest->path, "weight"), class_rows(0, kClasses, 5, false),
                     "weight after the move");
}

TEST(CheckpointRoundTrip, DataParallelSavesTheRowsOfItsRank) {
  // DP holds every class on every rank and passes the rows of its rank's MP layout: the
  // checkpoint is the same as MP's, and DP resumes by reading all rows.
  const auto root = shared_scratch("checkpoint_dp");
  MpiComm comm;
  const Tensor all = class_rows(0, kClasses, 9, false);
  const Tensor all_momentum = class_rows(0, kClasses, 9, true);
  const ShardLayout layout = ShardLayout::make(kClasses, comm.world_size(), comm.rank(), 1.0);
  Checkpoint c = checkpoint_at(9, comm.rank(), comm.world_size());
  c.state.method = "dp";
  c.shard.weight = all.rows(layout.class_start, layout.class_end());
  c.shard.momentum = all_momentum.rows(layout.class_start, layout.class_end());
  write_checkpoint(comm, root, c, 1);
  const Checkpoint read =
      read_checkpoint(latest_checkpoint(root)->path, {kClasses, kEmbedding, 0, kClasses});
  expect_same_tensor(read.shard.weight, all, "every class");
  expect_same_tensor(read.shard.momentum, all_momentum, "every class's momentum");
  EXPECT_EQ(read.state.method, "dp");
}

}  // namespace
}  // namespace pfc
