// Checkpoints under failure: half-written ones are ignored and `latest` stays on the last
// complete one; a rank that fails makes every rank fail and changes nothing; damaged files
// and a config that does not match are clear errors; old checkpoints are pruned.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>

#include "comm/mpi_comm.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;
using namespace pfc::test;

CheckpointInfo write_step(Comm& comm, const fs::path& root, std::int64_t step,
                          std::int64_t keep = 5) {
  return write_checkpoint(comm, root, checkpoint_at(step, comm.rank(), comm.world_size()), keep);
}

CheckpointRequest request_for_rank(int rank, int world) {
  const ShardLayout layout = ShardLayout::make(kClasses, world, rank, 1.0);
  return {kClasses, kEmbedding, layout.class_start, layout.num_local};
}

std::vector<std::int64_t> listed_steps(const fs::path& root) {
  std::vector<std::int64_t> steps;
  for (const CheckpointInfo& info : list_checkpoints(root)) steps.push_back(info.step);
  return steps;
}

// Runs `change` on rank 0 only, then waits for it on every rank.
template <class Change>
void on_rank_zero(Change&& change) {
  if (world_rank() == 0) change();
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CheckpointRecovery, HalfWrittenCheckpointsAreIgnored) {
  const auto root = shared_scratch("checkpoint_half_written");
  MpiComm comm;
  write_step(comm, root, 10);
  on_rank_zero([&] {
    // A crash while writing step 20 (shards only), and one after step 30 was renamed but
    // before `latest` named it.
    fs::create_directory(root / "step_0000020.tmp");
    fs::copy_file(root / "step_0000010" / "shard_00000.h5",
                  root / "step_0000020.tmp" / "shard_00000.h5");
    fs::copy(root / "step_0000010", root / "step_0000030", fs::copy_options::recursive);
  });
  const auto latest = latest_checkpoint(root);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 10);
  const Checkpoint read = read_checkpoint(latest->path, request_for_rank(0, 1));
  EXPECT_EQ(read.state.step, 10);

  // The resumed run writes step 20 over the remains, and the abandoned step 30 goes.
  write_step(comm, root, 20);
  EXPECT_EQ(latest_checkpoint(root)->step, 20);
  EXPECT_EQ(listed_steps(root), (std::vector<std::int64_t>{10, 20}));
  EXPECT_FALSE(fs::exists(root / "step_0000020.tmp"));
  EXPECT_FALSE(fs::exists(root / "step_0000030"));
  expect_same_tensor(read_class_matrix(root / "step_0000020", "weight"),
                     class_rows(0, kClasses, 20, kCentres), "step 20 weight");
}

TEST(CheckpointRecovery, AFailureOnOneRankFailsEveryRankAndChangesNothing) {
  const auto root = shared_scratch("checkpoint_failing_rank");
  MpiComm comm;
  write_step(comm, root, 10);

  // The last rank's shard has a momentum of the wrong shape.
  Checkpoint bad = checkpoint_at(20, comm.rank(), comm.world_size());
  if (comm.rank() == comm.world_size() - 1)
    bad.shard.moments[0].value = Tensor::host({1, 1}, DType::f32);
  try {
    write_checkpoint(comm, root, bad, 5);
    ADD_FAILURE() << "a bad shard was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step_0000020"), std::string::npos) << e.what();
  }
  EXPECT_EQ(latest_checkpoint(root)->step, 10);
  EXPECT_FALSE(fs::exists(root / "step_0000020"));

  // Rank 0's part fails: a backbone tensor that is not f32.
  Checkpoint bad_model = checkpoint_at(20, comm.rank(), comm.world_size());
  bad_model.parameters[1].value = Tensor::host({4}, DType::i64);
  EXPECT_THROW(write_checkpoint(comm, root, bad_model, 5), Error);
  EXPECT_EQ(latest_checkpoint(root)->step, 10);
  EXPECT_FALSE(fs::exists(root / "step_0000020"));

  write_step(comm, root, 20);
  EXPECT_EQ(latest_checkpoint(root)->step, 20);
}

TEST(CheckpointRecovery, TheLatestCheckpointIsNotOverwritten) {
  const auto root = shared_scratch("checkpoint_no_overwrite");
  MpiComm comm;
  write_step(comm, root, 7);
  EXPECT_THROW(write_step(comm, root, 7), Error);
  EXPECT_EQ(latest_checkpoint(root)->step, 7);
  expect_same_tensor(read_class_matrix(root / "step_0000007", "momentum"),
                     class_rows(0, kClasses, 7, 1), "step 7 momentum");
}

// Reading rows that include class 0 (so shard 0 is needed): rank 0 of 2, and every row.
void expect_error_naming(const fs::path& folder, const std::string& file) {
  for (const CheckpointRequest& request :
       {request_for_rank(0, 2), CheckpointRequest{kClasses, kEmbedding, 0, kClasses}}) {
    try {
      read_checkpoint(folder, request);
      ADD_FAILURE() << "read a checkpoint whose " << file << " is damaged";
    } catch (const UsageError& e) {
      ADD_FAILURE() << "a damaged file is not a usage error: " << e.what();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_class_matrix(folder, "weight"), Error);
}

TEST(CheckpointRecovery, DamagedFilesAreClearErrors) {
  const auto root = shared_scratch("checkpoint_damaged");
  MpiComm comm;
  const CheckpointInfo good = write_step(comm, root, 3);
  on_rank_zero([&] {
    for (const char* copy : {"garbage_model", "truncated_model", "no_model", "no_shard",
                             "garbage_shard"})
      fs::copy(good.path, root / copy, fs::copy_options::recursive);
    std::ofstream(root / "garbage_model" / "model.h5", std::ios::trunc) << "not HDF5";
    fs::resize_file(root / "truncated_model" / "model.h5",
                    fs::file_size(good.path / "model.h5") / 2);
    fs::remove(root / "no_model" / "model.h5");
    fs::remove(root / "no_shard" / "shard_00000.h5");
    std::ofstream(root / "garbage_shard" / "shard_00000.h5", std::ios::trunc) << "not HDF5";
  });
  expect_error_naming(root / "garbage_model", "model.h5");
  expect_error_naming(root / "truncated_model", "model.h5");
  expect_error_naming(root / "no_model", "model.h5");
  expect_error_naming(root / "no_shard", "shard_00000.h5");
  expect_error_naming(root / "garbage_shard", "shard_00000.h5");
  // The damaged copies did not touch the checkpoint they came from.
  EXPECT_EQ(read_checkpoint(good.path, request_for_rank(0, 2)).state.step, 3);
}

TEST(CheckpointRecovery, AConfigThatDoesNotMatchIsAUsageError) {
  const auto root = shared_scratch("checkpoint_mismatch");
  MpiComm comm;
  const CheckpointInfo written = write_step(comm, root, 4);
  try {
    read_checkpoint(written.path, {kClasses + 1, kEmbedding, 0, 1});
    ADD_FAILURE() << "resumed with other classes";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("num_classes = 11"), std::string::npos) << message;
    EXPECT_NE(message.find("num_classes = 12"), std::string::npos) << message;
  }
  try {
    read_checkpoint(written.path, {kClasses, 512, 0, 1});
    ADD_FAILURE() << "resumed with another embedding size";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("embedding_size = 6"), std::string::npos) << message;
    EXPECT_NE(message.find("embedding_size = 512"), std::string::npos) << message;
  }
  EXPECT_THROW(read_checkpoint(written.path, {kClasses, kEmbedding, 10, 5}), Error);
}

TEST(CheckpointRecovery, KeepsOnlyTheNewestCheckpoints) {
  const auto root = shared_scratch("checkpoint_prune");
  MpiComm comm;
  for (std::int64_t step = 1; step <= 5; ++step) write_step(comm, root, step, 2);
  EXPECT_EQ(listed_steps(root), (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(latest_checkpoint(root)->step, 5);
  write_step(comm, root, 6, 1);
  EXPECT_EQ(listed_steps(root), (std::vector<std::int64_t>{6}));
  EXPECT_FALSE(fs::exists(root / "latest.tmp"));
}

}  // namespace
}  // namespace pfc
