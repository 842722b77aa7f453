// Checkpoints written on w ranks (every w up to the world size, through a sub-communicator)
// read back exactly under every layout of 1..4 ranks: the resume of a run on another number
// of ranks (2 -> 3, 3 -> 2, 1 -> 2, ...), with SGD's moment or AdamW's two and their update
// counts; a checkpoint written before AdamW existed reads as SGD; a config with another
// optimiser is refused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <hdf5.h>

#include "comm/mpi_comm.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"

namespace pfc {
namespace {

using namespace pfc::test;

// Ranks [0, w) of the world write the checkpoint of `step` under root.
void write_on_first_ranks(int w, const std::filesystem::path& root, std::int64_t step,
                          const std::string& optimizer = "sgd") {
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < w ? 0 : MPI_UNDEFINED, world_rank(), &sub);
  if (sub != MPI_COMM_NULL) {
    {
      MpiComm comm(sub);
      const CheckpointInfo written =
          write_checkpoint(comm, root, checkpoint_at(step, comm.rank(), w, optimizer), 2);
      EXPECT_EQ(written.step, step);
      EXPECT_EQ(written.path, root / checkpoint_folder_name(step));
    }
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

class CheckpointRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointRoundTrip, ResumesOnAnyNumberOfRanks) {
  const std::string optimizer = GetParam();
  const auto scratch = shared_scratch("checkpoint_roundtrip_" + optimizer);
  for (int w = 1; w <= world_size(); ++w) {
    const auto root = scratch / ("written_on_" + std::to_string(w));
    const std::int64_t step = 100 + w;
    write_on_first_ranks(w, root, step, optimizer);

    const auto latest = latest_checkpoint(root);
    ASSERT_TRUE(latest.has_value());
    EXPECT_EQ(latest->step, step);
    const Checkpoint saved = checkpoint_at(step, 0, w, optimizer);
    const std::vector<std::string> moments = moments_of(optimizer);
    // Every process reads the share of some ranks of every layout 1..4.
    for (int resumed_world = 1; resumed_world <= 4; ++resumed_world) {
      for (int r = world_rank(); r < resumed_world; r += world_size()) {
        SCOPED_TRACE(::testing::Message() << "written on " << w << " ranks, read as rank " << r
                                          << " of " << resumed_world);
        const ShardLayout layout = ShardLayout::make(kClasses, resumed_world, r, 1.0);
        const Checkpoint read =
            read_checkpoint(latest->path, {kClasses, kEmbedding, layout.class_start,
                                           layout.num_local, optimizer});
        expect_same_named(read.parameters, saved.parameters);
        expect_same_moments(read.moments, saved.moments);
        expect_same_named(read.buffers, saved.buffers);
        EXPECT_EQ(read.shard.class_start, layout.class_start);
        expect_same_tensor(read.shard.weight,
                           class_rows(layout.class_start, layout.num_local, step, kCentres),
                           "class centres");
        ASSERT_EQ(read.shard.moments.size(), moments.size());
        for (std::size_t k = 0; k < moments.size(); ++k) {
          EXPECT_EQ(read.shard.moments[k].name, moments[k]);
          expect_same_tensor(read.shard.moments[k].value,
                             class_rows(layout.class_start, layout.num_local, step,
                                        static_cast<int>(k) + 1),
                             "class centre " + moments[k]);
        }
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
        EXPECT_EQ(s.optimizer, optimizer);
        EXPECT_EQ(s.backbone_updates, step - 1);
        EXPECT_EQ(s.classifier_updates, step);
      }
    }
    expect_same_tensor(read_class_matrix(latest->path, "weight"),
                       class_rows(0, kClasses, step, kCentres), "whole weight matrix");
    for (std::size_t k = 0; k < moments.size(); ++k)
      expect_same_tensor(read_class_matrix(latest->path, moments[k]),
                         class_rows(0, kClasses, step, static_cast<int>(k) + 1),
                         "whole " + moments[k] + " matrix");
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, CheckpointRoundTrip, ::testing::Values("sgd", "adamw"),
                         [](const auto& info) { return info.param; });

// A config whose optimiser is not the one the checkpoint holds the state of: a usage error
// that names both, on every rank.
TEST(CheckpointOptimizer, AnotherOptimiserIsRefused) {
  const auto scratch = shared_scratch("checkpoint_other_optimizer");
  write_on_first_ranks(world_size(), scratch, 3, "adamw");
  const ShardLayout layout = ShardLayout::make(kClasses, world_size(), world_rank(), 1.0);
  try {
    read_checkpoint(latest_checkpoint(scratch)->path,
                    {kClasses, kEmbedding, layout.class_start, layout.num_local, "sgd"});
    ADD_FAILURE() << "an AdamW checkpoint resumed with optimizer = sgd";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("optimizer = \"adamw\""), std::string::npos) << what;
    EXPECT_NE(what.find("optimizer = \"sgd\""), std::string::npos) << what;
  }
  EXPECT_THROW(read_class_matrix(latest_checkpoint(scratch)->path, "momentum"), Error);
}

// model.h5 as pfc wrote it before AdamW: the same datasets, without the optimiser's name, the
// update counts and the list of moments. It reads as SGD stepped `step` times.
TEST(CheckpointOptimizer, ACheckpointFromBeforeAdamWReadsAsSgd) {
  const auto scratch = shared_scratch("checkpoint_before_adamw");
  write_on_first_ranks(world_size(), scratch, 12);
  const auto folder = latest_checkpoint(scratch)->path;
  if (world_rank() == 0) {
    const hid_t file = H5Fopen((folder / kModelFile).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    for (const char* name : {"optimizer", "backbone_updates", "classifier_updates"})
      EXPECT_GE(H5Adelete_by_name(file, "/state", name, H5P_DEFAULT), 0) << name;
    EXPECT_GE(H5Adelete_by_name(file, "/pfc", "moments", H5P_DEFAULT), 0);
    H5Fclose(file);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const ShardLayout layout = ShardLayout::make(kClasses, world_size(), world_rank(), 1.0);
  const Checkpoint read =
      read_checkpoint(folder, {kClasses, kEmbedding, layout.class_start, layout.num_local});
  EXPECT_EQ(read.state.optimizer, "sgd");
  EXPECT_EQ(read.state.backbone_updates, 12);
  EXPECT_EQ(read.state.classifier_updates, 12);
  expect_same_moments(read.moments, checkpoint_at(12, 0, world_size()).moments);
  ASSERT_EQ(read.shard.moments.size(), 1u);
  EXPECT_EQ(read.shard.moments[0].name, "momentum");
  expect_same_tensor(read.shard.moments[0].value,
                     class_rows(layout.class_start, layout.num_local, 12, 1), "momentum");
}

TEST(CheckpointRoundTrip, FolderCanMove) {
  const auto scratch = shared_scratch("checkpoint_moved");
  write_on_first_ranks(world_size(), scratch / "before", 5);
  if (world_rank() == 0) std::filesystem::rename(scratch / "before", scratch / "after");
  MPI_Barrier(MPI_COMM_WORLD);
  const auto latest = latest_checkpoint(scratch / "after");
  ASSERT_TRUE(latest.has_value());
  expect_same_tensor(read_class_matrix(latest->path, "weight"),
                     class_rows(0, kClasses, 5, kCentres), "weight after the move");
}

TEST(CheckpointRoundTrip, DataParallelSavesTheRowsOfItsRank) {
  // DP holds every class on every rank and passes the rows of its rank's MP layout: the
  // checkpoint is the same as MP's, and DP resumes by reading all rows.
  const auto root = shared_scratch("checkpoint_dp");
  MpiComm comm;
  const Tensor all = class_rows(0, kClasses, 9, kCentres);
  const Tensor all_momentum = class_rows(0, kClasses, 9, 1);
  const ShardLayout layout = ShardLayout::make(kClasses, comm.world_size(), comm.rank(), 1.0);
  Checkpoint c = checkpoint_at(9, comm.rank(), comm.world_size());
  c.state.method = "dp";
  c.shard.weight = all.rows(layout.class_start, layout.class_end());
  c.shard.moments[0].value = all_momentum.rows(layout.class_start, layout.class_end());
  write_checkpoint(comm, root, c, 1);
  const Checkpoint read =
      read_checkpoint(latest_checkpoint(root)->path, {kClasses, kEmbedding, 0, kClasses});
  expect_same_tensor(read.shard.weight, all, "every class");
  expect_same_tensor(read.shard.moments[0].value, all_momentum, "every class's momentum");
  EXPECT_EQ(read.state.method, "dp");
}

}  // namespace
}  // namespace pfc
