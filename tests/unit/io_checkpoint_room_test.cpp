// Room for a checkpoint (io/checkpoint_room.h): what the file system of its folder and the host
// have free, and the refusal, with the figures, of a checkpoint that needs more disk or host
// memory than that (the figures given here, as a full disk or host would have them).
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/backend.h"
#include "comm/emulated_comm.h"
#include "io/checkpoint_room.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class CheckpointRoomTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = make_backend(BackendKind::cpu);
  EmulatedComm comm{1, 0, 2.0, 5.0, *backend};
  fs::path root = fs::path(test::scratch_dir("checkpoint_room")) / "run" / "ckpt";
};

// The refusal's message, or "" when the checkpoint fits.
std::string refusal(Comm& comm, const fs::path& root, const CheckpointCost& cost,
                    const CheckpointRoom& room) {
  try {
    check_checkpoint_room(comm, root, 40, cost, room);
  } catch (const CheckpointRefused& e) {
    return e.what();
  }
  return "";
}

TEST_F(CheckpointRoomTest, MeasuresTheNearestExistingFolderAndTheHost) {
  const CheckpointRoom room = measure_checkpoint_room(root);
  EXPECT_EQ(room.disk_folder, fs::absolute(test::scratch_path("checkpoint_room")).string());
  EXPECT_GT(room.free_disk_bytes, 0);
  EXPECT_GT(room.free_host_bytes, 0);
  EXPECT_FALSE(room.host_source.empty());
}

TEST_F(CheckpointRoomTest, FitsWhenBothFiguresDo) {
  const CheckpointCost cost{3 * kGiB, 2 * kGiB, 2 * kGiB};
  EXPECT_EQ(refusal(comm, root, cost, {3 * kGiB, "/disk", 2 * kGiB, "MemAvailable"}), "");
}

TEST_F(CheckpointRoomTest, RefusesWithTheFiguresOfWhatIsShort) {
  const CheckpointCost cost{59 * kGiB, 7 * kGiB + kGiB / 2, 8 * kGiB};
  const std::string where = (root / "step_0000040").string();
  EXPECT_EQ(refusal(comm, root, cost, {12 * kGiB, "/disk", 100 * kGiB, "MemAvailable"}),
            "checkpoint " + where + " is not written (no earlier checkpoint is touched): it needs "
            "59.00 GiB of disk for its files, 12.00 GiB free in '/disk'");
  EXPECT_EQ(refusal(comm, root, cost, {100 * kGiB, "/disk", 4 * kGiB, "memory.max"}),
            "checkpoint " + where + " is not written (no earlier checkpoint is touched): it needs "
            "7.50 GiB of host memory to stage rank 0's part, 4.00 GiB available (memory.max)");
  const std::string both = refusal(comm, root, cost, {0, "/disk", 0, "MemAvailable"});
  EXPECT_NE(both.find("59.00 GiB of disk for its files, 0.00 MiB free in '/disk'; and 7.50 GiB "
                      "of host memory"),
            std::string::npos)
      << both;
}

TEST_F(CheckpointRoomTest, NamesTheCheckpointThatStaysCurrent) {
  test::write_text_file((root / "step_0000020" / "model.h5").string());
  test::write_text_file((root / "latest").string(), "step_0000020\n");
  const std::string message =
      refusal(comm, root, {2 * kGiB, 0, 0}, {kGiB / 2, "/disk", kGiB, "MemAvailable"});
  EXPECT_NE(message.find("is not written (`latest` stays on step_0000020): it needs 2.00 GiB of "
                         "disk for its files, 512.00 MiB free in '/disk'"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace pfc
